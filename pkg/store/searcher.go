package store

import "context"

// Searcher is a store that keeps each entry's searchable text indexed
// (SPEC §15: the database's pg_trgm index), written with the entry: a
// search asks it for the entries that may match and searches only those,
// as it searches a file. pkg/pgstore implements it; a command reaches it
// through this interface only.
type Searcher interface {
	// Candidates returns the sessions holding an entry whose searchable
	// text (internal/search: Text, folded by Fold) holds every needle (folded
	// too), or is not indexed (more than match, never fewer), newest
	// first (SortNewest), each with those entries' sequence numbers (1
	// for the first entry, in order). A session's Summary has its ID,
	// Path, Modified and Size.
	Candidates(ctx context.Context, needles []string) ([]Candidate, error)
	// OpenCandidates reads session id as Open does, with the entries seqs
	// kept and the others that a search of the file reads whatever
	// matched (the first ones, the calls of tool results among seqs);
	// every other entry an empty line, so each line is where it is in the
	// session's file.
	OpenCandidates(ctx context.Context, id string, seqs []int64) (Reader, error)
}

// Candidate is a session a Searcher found candidates in, and their
// sequence numbers.
type Candidate struct {
	Summary
	Seqs []int64
}
