package palace

import (
	"hash/fnv"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/govern"
)

// Note is one mined note as the palace keeps it.
type Note struct {
	// ID is stable for the same wing, source and content (see mine.NoteID).
	ID string
	// Wing is the id of the wing holding the note.
	Wing string
	// Agent is the agent whose memory the note came from.
	Agent string
	// Source is the absolute path of the markdown file.
	Source string
	// Line is the 1-based line where the note starts in Source.
	Line int
	// Heading is the heading path above the note ("Build > Web").
	Heading string
	// Text is the note's markdown text.
	Text string
	// Governance is the note's status, dates and tags, decided when it was
	// mined.
	Governance govern.Note
}

// EmbedText is the text given to the embedding model: the heading path
// gives a bare bullet its context, which measurably helps recall.
func (n *Note) EmbedText() string {
	if n.Heading == "" {
		return n.Text
	}
	return n.Heading + ": " + n.Text
}

// Source is what the palace knows about one mined markdown file.
type Source struct {
	// Path is the file's absolute path.
	Path string
	// Agent is the agent the file belongs to.
	Agent string
	// Mtime and Size are the file's as last mined: the cheap change check.
	Mtime time.Time
	Size  int64
	// Hash is the SHA-256 of the content as last mined, hex.
	Hash string
	// NoteIDs are the ids of the file's notes in source order.
	NoteIDs []string
	// Frontmatter holds the file's scalar frontmatter values as text.
	Frontmatter map[string]string
	// Mined is when the file was last mined.
	Mined time.Time
	// Governed is the govern.Version the file's notes were classified
	// with; zero for a file mined before notes had a governance.
	Governed int
	// GovernedFile is the key (govern.File.Key) of the frontmatter
	// governance the file's notes were classified with; empty when not
	// recorded.
	GovernedFile string
	// NoteFormat is the version of how the miner derived the file's notes
	// (ids, fields); zero in palaces written before it was recorded. The
	// miner decides what versions mean and mines older ones again.
	NoteFormat int
	// Earlier are the file's contents as mined before this one, newest
	// first, at most MaxEarlierVersions: the common ancestor a merge of a
	// conflict copy needs, which the last mined version seldom is.
	Earlier []Version
	// Resume is where the miner may take up the file again once it has
	// only grown, in the miner's encoding (markdown.Resume). The palace
	// keeps it with the file, and drops it when a note the file shares
	// with another (the same id) passes between them: the wing's notes of
	// the file are then no longer the ones its content gave.
	Resume []byte
	// Dropped are the SeenKeys of the notes the file held in contents
	// older than Earlier that neither it nor Earlier holds: with them,
	// the current notes and Earlier's are every note the palace has ever
	// seen in the file. A file only appended to drops nothing, so this
	// stays empty; a merge uses it to tell additions from removals when
	// no base is left (docs/conflicts.md).
	Dropped []uint64
}

// SeenKey identifies a note by its heading and text in Source.Dropped.
func SeenKey(heading, text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(heading))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return h.Sum64()
}

// MaxEarlierVersions bounds Source.Earlier.
const MaxEarlierVersions = 4

// Version is one content of a source as it was mined.
type Version struct {
	// Hash is the SHA-256 of the content, hex.
	Hash string
	// Mined is when it was mined.
	Mined time.Time
	// Notes are its notes in source order.
	Notes []VersionNote
	// Frontmatter holds its scalar frontmatter values as text.
	Frontmatter map[string]string
}

// VersionNote is one note of a Version.
type VersionNote struct {
	Heading string
	Text    string
	// Line is the 1-based line where the note started.
	Line int
}

// WingInfo summarises a wing for status.
type WingInfo struct {
	ID        string    `json:"id"`
	Notes     int       `json:"notes"`
	Sources   int       `json:"sources"`
	Model     string    `json:"model"`
	LastMined time.Time `json:"last_mined"`
	// Roots are the paths the wing was mined from.
	Roots []string `json:"roots"`
}

// NormalizeWingID case-folds id and checks it is a valid wing id:
// [a-z0-9][a-z0-9._-]*, at most 64 characters, never "." or "..". The
// rule is the hive's (agent directories are named by their wing ids); see
// hive.NormalizeWingID.
func NormalizeWingID(id string) (string, error) { return hive.NormalizeWingID(id) }
