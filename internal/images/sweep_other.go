//go:build !unix

package images

import "io/fs"

// ownedByUs is true: on Windows the temporary directory is the user's own
// (%TEMP% under the profile), so name and age suffice.
func ownedByUs(fs.FileInfo) bool { return true }
