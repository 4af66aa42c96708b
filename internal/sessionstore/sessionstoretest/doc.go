// Package sessionstoretest plants in a state directory what a local
// process could put there (FIFOs, links to /dev/zero, oversized and
// corrupt records, special write logs), for the tests of the session store
// and of the agent that lists and loads sessions from it (Unix: FIFOs).
package sessionstoretest
