// The reference token counter for the tests: js-tiktoken, independent of the C++ counter.
//
//   node count_tokens.mjs ENCODING IN.json OUT.json
//
// IN.json is a JSON array of strings; OUT.json gets the array of their token counts under
// ENCODING (o200k_base or cl100k_base). Special-token text such as "<|endoftext|>" is counted as
// ordinary text, as model APIs do with text sent to them.
import { readFileSync, writeFileSync } from 'node:fs';

import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';

const [name, inPath, outPath] = process.argv.slice(2);
const ranks = { o200k_base: o200k, cl100k_base: cl100k }[name];
if (!ranks || !inPath || !outPath) {
  console.error('usage: node count_tokens.mjs o200k_base|cl100k_base IN.json OUT.json');
  process.exit(2);
}
const enc = new Tiktoken(ranks);
const texts = JSON.parse(readFileSync(inPath, 'utf8'));
writeFileSync(outPath, JSON.stringify(texts.map((t) => enc.encode(t, [], []).length)));
