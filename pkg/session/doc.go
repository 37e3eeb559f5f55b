// Package session is panto's session-file format, version 1 (SPEC §2).
//
// A session file is JSON Lines: UTF-8 (bytes are kept exactly as written,
// invalid UTF-8 included), one JSON object per line, every line ending in
// "\n". Lines may be of any length.
//
// Line 1 is the header:
//
//	{"type":"session","version":1,"id":"<uuidv7>","timestamp":"<utc ms>Z","cwd":"/dir"}
//
// Every other line is an entry. A message entry is
//
//	{"type":"message","id":"a1b2c3d4","parentId":null|"<id>","timestamp":"…Z",
//	 ["provider":"…","model":"…",] "message":{"role":…,"content":[…],…}}
//
// with the fields in that order. Entry ids are 8 lowercase hex characters,
// unique in the file; parentId is null only for the first entry. User entries
// carry top-level provider and model (the provider/model the request was sent
// to); system and assistant entries do not. An assistant message carries its
// own provider, model, stopReason and, when the provider reported it, usage.
//
// Entries form a tree by id/parentId. The leaf is the last entry in the file.
//
// How a line is classified (Classify):
//
//   - corrupt: not a complete JSON object (truncated, garbage, NUL padding,
//     a JSON array or scalar). Readers stop at the first corrupt line.
//   - header: type "session".
//   - message: type "message" that follows the rules.
//   - invalid: a complete object that breaks the rules (a message with no
//     role, an unknown block type, a missing id). Readers skip it with a
//     warning; no repair cuts it.
//   - unknown: a complete object with another type ("label", a future one,
//     and the two SPEC §13 gives meaning to: a compaction, compaction.go, and
//     a tool round's mark). Kept byte for byte; if it has an id it is a node
//     of the tree.
//
// A torn tail is a final line without "\n", or a final stretch that is not a
// complete JSON object: what a crash during an append leaves. Only a line that
// ends in "\n" counts as written. pkg/scan's Log.Damage is the one verdict of
// torn tail against damage.
package session
