// Package filestore is the store of sessions as files (SPEC §4, §5). It
// writes session files: it is the one place that creates,
// appends to and cuts them, under the durability rules of SPEC §5.
//
//   - Every change happens under an exclusive flock(2) on the session file
//     (never POSIX fcntl locks, which any close in the process drops).
//   - A torn tail is cut before anything is appended, and the cut bytes are
//     first saved beside the file as <file>.cut-<UTC timestamp> and fsynced.
//   - A batch of entries is one write(2) on an O_APPEND descriptor followed
//     by fsync; on any error the file is cut back to where the batch began.
//     An fsync is never retried.
//   - A new file is written beside its final name, fsynced, hard-linked into
//     place (which fails if the name exists: a racing creator loses
//     visibly), and its directory fsynced.
//   - Nothing is ever simply deleted, and a header is never rewritten.
package filestore
