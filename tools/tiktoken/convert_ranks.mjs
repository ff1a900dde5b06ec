// Converts js-tiktoken's published rank tables into the compact files that the build embeds
// into agentckpt (restore/token_counter_tables.S), so that the token counter uses the real
// o200k_base and cl100k_base vocabularies without a download at run time.
//
//   npm ci && node convert_ranks.mjs OUT_DIR      writes OUT_DIR/o200k_base.bin, cl100k_base.bin
//
// Why js-tiktoken: it is the most used tiktoken port (also the reference the tests compare
// against) and ships the rank tables of every public OpenAI encoding as plain modules; Debian has
// no package with them, and the Python tiktoken downloads them at run time.
//
// File layout (little-endian):
//   "AGTK" | u32 version (1) | u32 token count N | u32 pattern bytes P | pattern (UTF-8) |
//   N x u8 token length (token i has rank i) | the N tokens' bytes, concatenated
// The pattern is js-tiktoken's pre-tokenizer regex with \s and \S spelled out as the exact set
// of code points that JavaScript's /\s/u matches (PCRE2's \s differs: U+0085, U+180E, U+FEFF), so
// PCRE2 splits text exactly as js-tiktoken does.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';

// The code points of JavaScript's \s, as a PCRE2 class body ("\x{9}-\x{d}\x{20}...").
function jsWhitespaceClassBody() {
  const ws = /^\s$/u;
  const ranges = [];
  for (let cp = 0; cp <= 0x10ffff; ++cp) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (!ws.test(String.fromCodePoint(cp))) continue;
    const last = ranges[ranges.length - 1];
    if (last && last[1] === cp - 1) last[1] = cp;
    else ranges.push([cp, cp]);
  }
  const hex = (cp) => `\\x{${cp.toString(16)}}`;
  return ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('');
}

// Rewrites \s and \S (inside and outside character classes) into explicit classes.
function pcre2Pattern(pat) {
  const body = jsWhitespaceClassBody();
  let out = '';
  let inClass = false;
  for (let i = 0; i < pat.length; ++i) {
    const c = pat[i];
    if (c === '\\') {
      const n = pat[i + 1];
      ++i;
      if (n === 's') out += inClass ? body : `[${body}]`;
      else if (n === 'S') {
        if (inClass) throw new Error('\\S inside a character class is not supported');
        out += `[^${body}]`;
      } else out += c + n;
      continue;
    }
    if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass) inClass = false;
    out += c;
  }
  return out;
}

function convert(name, ranks) {
  const byRank = [];
  for (const line of ranks.bpe_ranks.split('\n')) {
    if (!line) continue;
    const [, offsetStr, ...tokens] = line.split(' ');
    const offset = Number.parseInt(offsetStr, 10);
    tokens.forEach((t, i) => {
      byRank[offset + i] = Buffer.from(t, 'base64');
    });
  }
  for (let r = 0; r < byRank.length; ++r) {
    if (!byRank[r]) throw new Error(`${name}: rank ${r} missing (ranks must be 0..N-1)`);
    if (byRank[r].length === 0 || byRank[r].length > 255) {
      throw new Error(`${name}: token ${r} has ${byRank[r].length} bytes`);
    }
  }
  const pattern = Buffer.from(pcre2Pattern(ranks.pat_str), 'utf8');
  const header = Buffer.alloc(16);
  header.write('AGTK', 0, 'latin1');
  header.writeUInt32LE(1, 4);
  header.writeUInt32LE(byRank.length, 8);
  header.writeUInt32LE(pattern.length, 12);
  const lengths = Buffer.from(byRank.map((b) => b.length));
  return Buffer.concat([header, pattern, lengths, ...byRank]);
}

const outDir = process.argv[2];
if (!outDir) {
  console.error('usage: node convert_ranks.mjs OUT_DIR');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
for (const [name, ranks] of [['o200k_base', o200k], ['cl100k_base', cl100k]]) {
  const bin = convert(name, ranks);
  writeFileSync(join(outDir, `${name}.bin`), bin);
  console.log(`${name}: ${bin.length} bytes`);
}
