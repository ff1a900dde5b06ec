// Fidelity of the Firestore emulator against Google's official Node client
// (@google-cloud/firestore, REST transport via preferRest) in emulator mode.
//
// Environment: FIRESTORE_EMULATOR_BIN (the emulator binary), FIDELITY_WRITER_BIN (writes
// checkpoints through agentckpt's FirestoreStore and prints them). The emulator is started on a
// free loopback port and stopped by pid.
'use strict';

const assert = require('node:assert/strict');
const {spawn, execFileSync} = require('node:child_process');
const net = require('node:net');
const {Firestore, Timestamp} = require('@google-cloud/firestore');
const {PassThroughClient} = require('google-auth-library');

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const {port} = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitForEmulator(hostPort) {
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(`http://${hostPort}/`);
      if (res.ok) return;
    } catch (e) {
      // not up yet
    }
    await new Promise(r => setTimeout(r, 25));
  }
  throw new Error('emulator did not start');
}

// Firestore values as the official client returns them -> plain JSON like agentckpt's documents.
function toPlain(v) {
  if (v instanceof Timestamp) return v.toDate().toISOString();
  if (Array.isArray(v)) return v.map(toPlain);
  if (v !== null && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v)) out[k] = toPlain(v[k]);
    return out;
  }
  return v;
}

// The REST transport reports a Firestore error either decoded by google-gax (err.code is the
// gRPC code) or, through the pass-through auth client's gaxios, as the HTTP error itself
// (err.code is the HTTP status and the message is Firestore's error body). Both must carry
// Firestore's canonical status.
async function expectError(promise, grpcCode, httpStatus, statusName, what) {
  await assert.rejects(promise, err => {
    if (err.code === grpcCode) return true;
    assert.equal(err.code, httpStatus, `${what}: ${err.message}`);
    const body = JSON.parse(err.message);
    assert.equal(body.error.status, statusName, what);
    assert.equal(body.error.code, httpStatus, what);
    assert.equal(typeof body.error.message, 'string', what);
    return true;
  });
}

async function run(db, hostPort) {
  const people = db.collection('people');
  let checks = 0;
  const check = async (name, fn) => {
    await fn();
    checks++;
    console.log(`ok ${checks} - ${name}`);
  };

  await check('set then get returns the same typed data', async () => {
    const at = Timestamp.fromMillis(1793760300123);
    await people.doc('ada').set({
      name: 'Ada', born: 1815, tags: ['math', 'poetry'], nested: {a: true, n: -3},
      nothing: null, at, empty: [], emptyMap: {}, ratio: 0.5,
    });
    const snap = await people.doc('ada').get();
    assert.equal(snap.exists, true);
    const d = snap.data();
    assert.equal(d.name, 'Ada');
    assert.equal(d.born, 1815);
    assert.deepEqual(d.tags, ['math', 'poetry']);
    assert.deepEqual(d.nested, {a: true, n: -3});
    assert.equal(d.nothing, null);
    assert.equal(d.at.toMillis(), 1793760300123);
    assert.deepEqual(d.empty, []);
    assert.deepEqual(d.emptyMap, {});
    assert.equal(d.ratio, 0.5);
    assert.ok(snap.updateTime instanceof Timestamp);
  });

  await check('create makes a new document', async () => {
    await people.doc('alan').create({name: 'Alan', born: 1912});
    await people.doc('grace').create({name: 'Grace', born: 1906});
    await people.doc('edsger').create({name: 'Edsger', born: 1930});
    assert.equal((await people.doc('alan').get()).data().born, 1912);
  });

  await check('create of an existing document is ALREADY_EXISTS', async () => {
    await expectError(people.doc('alan').create({name: 'Other'}), 6, 409, 'ALREADY_EXISTS',
                      'create conflict');
    assert.equal((await people.doc('alan').get()).data().name, 'Alan');
  });

  await check('get of a missing document does not exist', async () => {
    const snap = await people.doc('nobody').get();
    assert.equal(snap.exists, false);
  });

  await check('orderBy descending with limit', async () => {
    const q = await people.orderBy('born', 'desc').limit(2).get();
    assert.deepEqual(q.docs.map(d => d.id), ['edsger', 'alan']);
  });

  await check('where filters', async () => {
    const before1910 = await people.where('born', '<', 1910).get();
    assert.deepEqual(before1910.docs.map(d => d.id).sort(), ['ada', 'grace']);
    const eq = await people.where('name', '==', 'Grace').get();
    assert.deepEqual(eq.docs.map(d => d.id), ['grace']);
    const contains = await people.where('tags', 'array-contains', 'poetry').get();
    assert.deepEqual(contains.docs.map(d => d.id), ['ada']);
    const both = await people.where('born', '>', 1900).where('born', '<', 1920).orderBy('born').get();
    assert.deepEqual(both.docs.map(d => d.id), ['grace', 'alan']);
  });

  await check('update merges fields; update of a missing document is NOT_FOUND', async () => {
    await people.doc('grace').update({rank: 'admiral'});
    const d = (await people.doc('grace').get()).data();
    assert.equal(d.rank, 'admiral');
    assert.equal(d.born, 1906);
    await expectError(people.doc('nobody').update({x: 1}), 5, 404, 'NOT_FOUND', 'update missing');
  });

  await check('delete removes the document', async () => {
    await people.doc('edsger').delete();
    assert.equal((await people.doc('edsger').get()).exists, false);
    const all = await people.get();
    assert.deepEqual(all.docs.map(d => d.id).sort(), ['ada', 'alan', 'grace']);
  });

  await check('getAll reads several documents, missing ones included', async () => {
    const snaps = await db.getAll(people.doc('ada'), people.doc('nobody'));
    assert.deepEqual(snaps.map(s => s.exists), [true, false]);
  });

  await check('the official client reads checkpoints agentckpt wrote, field for field', async () => {
    const written = JSON.parse(execFileSync(process.env.FIDELITY_WRITER_BIN,
                                            [hostPort, 'fidelity'], {encoding: 'utf8'}));
    assert.ok(written.length >= 5);
    for (const doc of written) {
      const ref = db.doc(`checkpoints/${doc.agentId}/snapshots/${doc.checkpointId}`);
      const snap = await ref.get();
      assert.equal(snap.exists, true, `${doc.checkpointId} missing`);
      const data = snap.data();
      assert.ok(data.timestamp instanceof Timestamp, 'timestamp is a Firestore timestamp');
      assert.ok(data.expireAt instanceof Timestamp, 'expireAt is a Firestore timestamp');
      assert.equal(typeof data.sequenceNumber, 'number');
      assert.deepEqual(toPlain(data), doc);
    }
    const newest = await db.collection('checkpoints/agent-fidelity/snapshots')
                         .orderBy('sequenceNumber', 'desc').limit(1).get();
    assert.equal(newest.docs.length, 1);
    assert.equal(newest.docs[0].data().sequenceNumber, 3);
    const agent = (await db.doc('agents/agent-fidelity').get()).data();
    assert.equal(agent.lastSequence, 3);
    assert.ok(agent.updatedAt instanceof Timestamp);
  });
  return checks;
}

async function main() {
  const port = await freePort();
  const hostPort = `127.0.0.1:${port}`;
  const child = spawn(process.env.FIRESTORE_EMULATOR_BIN,
                      ['--host', '127.0.0.1', '--port', String(port)], {stdio: 'inherit'});
  let failed = false;
  try {
    await waitForEmulator(hostPort);
    process.env.FIRESTORE_EMULATOR_HOST = hostPort;
    const db = new Firestore({
      projectId: 'fidelity',
      preferRest: true,
      authClient: new PassThroughClient(),
    });
    const checks = await run(db, hostPort);
    await db.terminate();
    console.log(`fidelity: ${checks} checks passed`);
  } catch (err) {
    failed = true;
    console.error('fidelity FAILED:', err);
  } finally {
    process.kill(child.pid, 'SIGTERM');
  }
  process.exit(failed ? 1 : 0);
}

main();
