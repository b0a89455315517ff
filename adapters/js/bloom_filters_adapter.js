#!/usr/bin/env node
// The npm package bloom-filters' BloomFilter behind the exec protocol (docs/PROTOCOL.md).
//
// Sized by BloomFilter.create(n, fpr) when the header gives fpr, or new BloomFilter(m, k) when
// it gives m and k. The seed goes to the filter's `seed` setter, reduced modulo 2^32: the
// library's hash (xxhashjs h64) keeps only the low 32 bits of a seed. Keys go in as a JavaScript
// user hands them: a string (text), a Number (int; exact below 2^53) or an 8-byte Buffer, little
// endian (bytes). memory_bits is the size of the filter's bit set (its `_filter.size`, declared
// in the library's type definitions), k its `_nbHashes`.
'use strict';

const { BloomFilter } = require('bloom-filters');
const LIBRARY = `bloom-filters ${require('bloom-filters/package.json').version}`;

const PROTOCOL = 1;
const MAX_BATCH = 65536;
const U64_LIMIT = 1n << 64n;
const SEED_MODULUS = 1n << 32n;
const NEWLINE = 0x0a;

class Refusal extends Error {}

function integerField(fields, name, low, limit) {
  const value = fields[name];
  if (!Number.isInteger(value) || value < low || value >= limit) {
    throw new Refusal(`${name} ${JSON.stringify(value)} is not an integer in ${low}..${limit}`);
  }
  return value;
}

// The seed as the exact decimal digits of the raw header: JSON.parse rounds above 2^53.
function exactSeed(rawHeader, fields) {
  const digits = /"seed"\s*:\s*(\d+)\s*[,}]/.exec(rawHeader);
  if (!digits || !Number.isInteger(fields.seed) || BigInt(digits[1]) >= U64_LIMIT) {
    throw new Refusal(`seed ${JSON.stringify(fields.seed)} is not an integer in 0..2^64`);
  }
  return BigInt(digits[1]);
}

function parseHeader(rawHeader) {
  let fields;
  try {
    fields = JSON.parse(rawHeader);
  } catch (error) {
    throw new Refusal(`header is not JSON: ${error.message}`);
  }
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
    throw new Refusal('header is not a JSON object');
  }
  if (fields.protocol !== PROTOCOL) {
    throw new Refusal(`unsupported protocol ${JSON.stringify(fields.protocol)} (this adapter speaks 1)`);
  }
  const header = {
    n: integerField(fields, 'n', 1, Number.MAX_SAFE_INTEGER),
    seed: exactSeed(rawHeader, fields),
    keyForm: fields.key_form === undefined ? 'text' : fields.key_form,
  };
  if (!['text', 'int', 'bytes'].includes(header.keyForm)) {
    throw new Refusal(`key_form ${JSON.stringify(header.keyForm)} is none of text, int, bytes`);
  }
  const hasFpr = 'fpr' in fields;
  if (hasFpr === ('m' in fields || 'k' in fields)) {
    throw new Refusal('the header needs either fpr, or m and k');
  }
  if (hasFpr) {
    if (typeof fields.fpr !== 'number' || !(fields.fpr > 0 && fields.fpr < 1)) {
      throw new Refusal(`fpr ${JSON.stringify(fields.fpr)} is not a number in (0, 1)`);
    }
    header.fpr = fields.fpr;
  } else {
    header.m = integerField(fields, 'm', 1, 2 ** 32);
    header.k = integerField(fields, 'k', 1, 2 ** 16);
  }
  return header;
}

const KEY_READERS = {
  text: (buffer, start, end) => buffer.toString('utf8', start, end),
  int: (buffer, start, end) => {
    const text = buffer.toString('latin1', start, end);
    if (!/^[0-9]+$/.test(text) || BigInt(text) >= U64_LIMIT) {
      throw new Refusal(`int key ${JSON.stringify(text)} is no decimal integer in 0..2^64`);
    }
    return Number(text);
  },
  bytes: (buffer, start, end) => {
    const text = buffer.toString('latin1', start, end);
    if (!/^[0-9]+$/.test(text) || BigInt(text) >= U64_LIMIT) {
      throw new Refusal(`bytes key ${JSON.stringify(text)} is no decimal integer in 0..2^64`);
    }
    const key = Buffer.alloc(8);
    key.writeBigUInt64LE(BigInt(text));
    return key;
  },
};

function build(header) {
  const filter = header.fpr !== undefined
    ? BloomFilter.create(header.n, header.fpr)
    : new BloomFilter(header.m, header.k);
  filter.seed = Number(header.seed % SEED_MODULUS);
  const probe = KEY_READERS[header.keyForm](Buffer.from('0'), 0, 1);
  try {
    filter.has(probe);
  } catch (error) {
    throw new Refusal(`${LIBRARY} refuses ${header.keyForm} keys: ${error.name}: ${error.message}`);
  }
  return filter;
}

function shape(filter) {
  return { memory_bits: filter._filter.size, k: filter._nbHashes };
}

function reply(text) {
  process.stdout.write(text + '\n');
}

function replyError(error) {
  const message = error instanceof Refusal ? error.message : `${error.name}: ${error.message}`;
  reply(JSON.stringify({ error: message }));
}

// One session: a state machine fed with complete lines (without their '\n').
class Session {
  constructor() {
    this.filter = null;
    this.readKey = null;
    this.batch = null; // { verb, count, keys } while key lines are awaited
    this.over = false; // after an error reply: ignore everything until `end`
  }

  line(buffer, start, end) {
    if (this.over) {
      if (buffer.toString('latin1', start, end) === 'end') process.exit(0);
      return;
    }
    try {
      if (this.batch) this.key(buffer, start, end);
      else if (this.filter) this.command(buffer.toString('latin1', start, end));
      else this.hello(buffer.toString('utf8', start, end));
    } catch (error) {
      replyError(error);
      this.over = true;
      this.batch = null;
    }
  }

  hello(rawHeader) {
    const header = parseHeader(rawHeader);
    this.filter = build(header);
    this.readKey = KEY_READERS[header.keyForm];
    reply(JSON.stringify({ name: `${LIBRARY} BloomFilter`, ...shape(this.filter), seeded: true }));
  }

  command(text) {
    const match = /^(insert|query) ([0-9]+)$/.exec(text);
    if (text === 'end') process.exit(0);
    if (text === 'stats') return reply(JSON.stringify(shape(this.filter)));
    if (!match || Number(match[2]) > MAX_BATCH) throw new Refusal(`unknown command ${JSON.stringify(text)}`);
    this.batch = { verb: match[1], count: Number(match[2]), keys: [] };
    if (this.batch.count === 0) this.finishBatch();
  }

  key(buffer, start, end) {
    const batch = this.batch;
    try {
      batch.keys.push(this.readKey(buffer, start, end));
    } catch (error) {
      batch.error = batch.error || error; // answered once the whole batch is read
      batch.keys.push(null);
    }
    if (batch.keys.length === batch.count) this.finishBatch();
  }

  finishBatch() {
    const { verb, keys, error } = this.batch;
    this.batch = null;
    if (error) throw error;
    if (verb === 'insert') {
      for (const key of keys) this.filter.add(key);
      return reply('ok');
    }
    const answer = Buffer.allocUnsafe(keys.length);
    for (let i = 0; i < keys.length; i++) answer[i] = this.filter.has(keys[i]) ? 0x31 : 0x30;
    reply(answer.toString('latin1'));
  }
}

function main() {
  const session = new Session();
  let pending = Buffer.alloc(0);
  process.stdin.on('data', (chunk) => {
    const buffer = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let start = 0;
    for (let end = buffer.indexOf(NEWLINE); end !== -1; end = buffer.indexOf(NEWLINE, start)) {
      session.line(buffer, start, end);
      start = end + 1;
    }
    pending = buffer.subarray(start);
  });
  process.stdin.on('end', () => {
    if (session.batch) {
      process.stderr.write(`bloomlab adapter: input ended inside a batch of ${session.batch.count} keys\n`);
      process.exit(1);
    }
    process.exit(0);
  });
}

main();
