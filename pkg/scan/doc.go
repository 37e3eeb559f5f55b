// Package scan reads a session file once and indexes it: the lines of a
// large file are cut into chunks, classified on every core by the format's
// one validator (session.ClassifyWith), and indexed in order into a Log, a
// small tree of entries without pointers (ids, parents, offsets; never the
// lines themselves) with every problem met on the way. Replay, fsck, the
// catalog and the append checkpoints read through it; cost streams through
// it without an index (ScanOptions.NoIndex).
package scan
