package palace

// interner makes equal strings of a decoded wing's sources share one
// copy (the notes' own are shared by storer). gob decodes every string on
// its own, so without it a loaded wing holds (from version 1 files) each
// note id twice more, in its source's NoteIDs, and the text of every
// earlier version's notes again, although the current notes mostly have
// the same.
type interner map[string]string

func newInterner() interner { return interner{} }

// of returns the shared copy of s.
func (in interner) of(s string) string {
	if s == "" {
		return ""
	}
	if c, ok := in[s]; ok {
		return c
	}
	in[s] = s
	return s
}

// sourcesV1 makes the sources' note ids the notes' own, and the texts of
// their earlier versions those of the current notes where they are equal.
// A version 2 wing file refers to the notes for both (decodeMeta).
func (in interner) sourcesV1(sources []Source, notes []*storedNote) {
	var byID map[string]*storedNote
	var texts map[string]string
	for i := range sources {
		s := &sources[i]
		s.Path, s.Agent = in.of(s.Path), in.of(s.Agent)
		if byID == nil && len(s.NoteIDs) > 0 {
			byID = make(map[string]*storedNote, len(notes))
			for _, n := range notes {
				byID[n.id] = n
			}
		}
		for i, id := range s.NoteIDs {
			if n, ok := byID[id]; ok {
				s.NoteIDs[i] = n.id
			}
		}
		for _, v := range s.Earlier {
			if texts == nil {
				texts = make(map[string]string, len(notes))
				for _, n := range notes {
					texts[n.text] = n.text
				}
			}
			for i := range v.Notes {
				vn := &v.Notes[i]
				vn.Heading = in.of(vn.Heading)
				if t, ok := texts[vn.Text]; ok {
					vn.Text = t
				} else {
					texts[vn.Text] = vn.Text
				}
			}
		}
	}
}
