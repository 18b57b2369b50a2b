// Package markdown cuts a markdown memory file into notes: small atomic
// pieces of text a person would recognise (a list item, a paragraph, a
// short section), each with its heading path and starting line, and reads
// its frontmatter. Mining, merge, remember, memfile, wake-up, the inbox and
// Git's merge driver all parse with it, with MemoryOptions, so a file is
// cut into the same notes wherever they meet it.
//
// It sits at the bottom of the import graph (of the project it uses only
// hive, for Git conflict markers, and internal/bytesize): parsing a file
// never brings in the palace, the vector store or an embedder.
package markdown
