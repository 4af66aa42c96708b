package sessionstore

// The store's bounds, for the external tests.
const (
	RecordMax   = recordMax
	WriteLogMax = writeLogMax
)
