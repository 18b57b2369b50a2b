package markdown

// Note is one atomic piece of a markdown file.
type Note struct {
	// Heading is the path of headings above the note, joined by " > "
	// ("Build > Web"); empty above the first heading.
	Heading string
	// Line is the 1-based line in the source file where the note starts.
	Line int
	// Text is the note's text as written (markdown kept, trimmed).
	Text string
	// Conflict is set for a note between Git conflict markers (see
	// hive.ConflictBlocks): one side's version of a merge not yet resolved.
	Conflict bool
}

// Document is a parsed markdown file.
type Document struct {
	// Frontmatter holds the YAML frontmatter's top-level keys, if any.
	Frontmatter map[string]any
	// BodyStart is the byte offset where the markdown body starts: after
	// the frontmatter block (valid or skipped as broken) and any byte order
	// mark, 0 when the file has neither.
	BodyStart int
	// Notes are the file's notes in source order.
	Notes []Note
	// Headings are the file's top-level headings in source order (the
	// ones that give notes their heading path).
	Headings []Heading
	// Resume, once Sections' notes are all ranged over, is where a parse
	// of the file grown by an append can start again (SectionsFrom); nil
	// when it cannot.
	Resume *Resume
	// Warnings describe problems that did not stop parsing, such as
	// frontmatter that is not valid YAML (it is then skipped and the rest of
	// the file is still parsed).
	Warnings []string
}

// Heading is one top-level heading of a markdown file.
type Heading struct {
	// Level is 1 for "#" (or a "===" underline) to 6 for "######".
	Level int
	// Text is the heading's text, markers stripped.
	Text string
	// Line is the 1-based line where the heading starts.
	Line int
}
