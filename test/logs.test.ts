import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from './helpers/eventually.js';
import { spawnService } from './helpers/service-process.js';

const ADMIN_TOKEN = 'log-test-admin-token-0123456789';

test('one JSON line per request with request id, partner, route, status and duration; never a secret', async () => {
  const service = await spawnService({
    ADMIN_TOKEN,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  });
  try {
    const call = async (path: string, headers: Record<string, string>, body?: unknown) => {
      const reply = await service.call(body === undefined ? 'GET' : 'POST', path, { headers, body });
      return { ...reply, id: reply.headers['x-request-id'] };
    };
    const created = await call(
      '/api/admin/v1/partners',
      { authorization: `Bearer ${ADMIN_TOKEN}` },
      { name: 'log test', access: { scope: 'global' } },
    );
    assert.equal(created.status, 201);
    const secret = created.body.data.secret as string;
    const ok = await call('/api/external/v1/listings?pageSize=1', { authorization: `Bearer ${secret}` });
    assert.equal(ok.status, 200);
    const viaKey = await call('/api/external/v1/listings', { 'x-api-key': secret });
    assert.equal(viaKey.status, 200);
    const wrong = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    const refused = await call('/api/external/v1/listings', { authorization: `Bearer ${wrong}` });
    assert.equal(refused.status, 401);
    // Failures an operator must be able to explain from the log alone.
    const readOnly = await call(
      '/api/admin/v1/partners',
      { authorization: `Bearer ${ADMIN_TOKEN}` },
      { name: 'log test reader', access: { scope: 'global' } },
    );
    const readSecret = readOnly.body.data.secret as string;
    const scope = await service.call('PUT', '/api/external/v1/listings/log-ref', {
      headers: { authorization: `Bearer ${readSecret}` },
      body: { title: 'x' },
    });
    assert.equal(scope.status, 403);
    const invalid = await service.call('GET', '/api/external/v1/listings?stauts=sold&pagesize=2', {
      headers: { authorization: `Bearer ${secret}` },
    });
    assert.equal(invalid.status, 400);
    const lineOf = (reply: { headers: Record<string, unknown> }) =>
      service.logs.find((l) => l.msg === 'request' && l.reqId === reply.headers['x-request-id']);
    // The child's lines arrive through a pipe, after the answers.
    await eventually(
      () => [refused, scope, invalid].every((reply) => lineOf(reply) !== undefined),
      () => 'no request line for one of the three answers',
    );
    assert.deepEqual(
      [lineOf(refused)?.status, lineOf(refused)?.errorCode, lineOf(refused)?.issueCount],
      [401, 'UNAUTHORIZED', 0],
    );
    const scopeLine = lineOf(scope);
    // (The partner was unknown to the log line of a 403 INSUFFICIENT_SCOPE.)
    assert.deepEqual(
      [scopeLine?.partnerId, scopeLine?.errorCode],
      [readOnly.body.data.id, 'INSUFFICIENT_SCOPE'],
    );
    assert.deepEqual(
      [lineOf(invalid)?.partnerId, lineOf(invalid)?.errorCode, lineOf(invalid)?.issueCount],
      [created.body.data.id, 'INVALID_QUERY', 2],
    );

    const line = service.logs.find((l) => l.msg === 'request' && l.reqId === ok.id);
    assert.ok(line, 'a request line carrying the X-Request-Id');
    assert.equal(line.partnerId, created.body.data.id);
    assert.equal(line.route, '/api/external/v1/listings');
    assert.equal(line.method, 'GET');
    assert.equal(line.status, 200);
    assert.equal(typeof line.durationMs, 'number');
    assert.equal(
      service.logs.filter((l) => l.msg === 'request' && l.reqId === ok.id).length,
      1,
      'exactly one line',
    );

    const everything = JSON.stringify(service.logs);
    for (const value of [secret, wrong, ADMIN_TOKEN, secret.slice(3, 30)]) {
      assert.ok(!everything.includes(value), 'no secret, or part of one, in any log line');
    }
  } finally {
    await service.stop();
  }
});

test('a stdout nobody reads neither stalls the service nor its shutdown: lines beyond LOG_BUFFER_BYTES are dropped, counted and reported', async (t) => {
  const service = await spawnService({
    ADMIN_TOKEN,
    LOG_BUFFER_BYTES: '65536',
    SHUTDOWN_TIMEOUT_MS: '3000',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  });
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  // Every call must be answered in time: before the fix, the first full pipe froze the process.
  // The request ids of every answer while stdout is unread: the lines that must arrive or be counted.
  let unread: unknown[] | undefined;
  const call = async (path: string) => {
    const reply = await service.call('GET', path, { headers: admin, signal: AbortSignal.timeout(10_000) });
    unread?.push(reply.headers['x-request-id']);
    return reply;
  };
  const droppedSoFar = async () => {
    const metrics = await call('/api/admin/v1/metrics');
    assert.equal(metrics.status, 200);
    const match = /^forecourt_log_lines_dropped_total (\d+)$/m.exec(metrics.text);
    assert.ok(match, 'the metric forecourt_log_lines_dropped_total');
    return Number(match[1]);
  };
  // Requests (one log line each) until the process has dropped more than `above` lines.
  const fillUntilDropping = async (above: number) => {
    for (let round = 0; round < 200; round++) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => call('/api/admin/v1/partners')));
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
      const dropped = await droppedSoFar();
      if (dropped > above) return dropped;
    }
    assert.fail('10,000 requests with stdout unread and no line dropped');
  };
  try {
    assert.equal(await droppedSoFar(), 0);
    service.child.stdout!.pause();
    unread = [];
    const dropped = await fillUntilDropping(0);
    const sent = unread;
    unread = undefined;

    // Read again: the lines held in the buffer arrive, and one line says how many were dropped.
    service.child.stdout!.resume();
    const reportOf = () => service.logs.find((l) => typeof l.droppedLines === 'number');
    await eventually(
      () => reportOf() !== undefined,
      () => `no line reports the dropped lines; last: ${JSON.stringify(service.logs.at(-1))}`,
    );
    const report = reportOf()!;
    assert.equal(report.level, 40, 'a warning');
    assert.match(String(report.msg), /log lines? (was|were) dropped: stdout was not taking them/);
    assert.ok(
      Number(report.droppedLines) >= dropped,
      `${report.droppedLines} reported, ${dropped} counted before`,
    );
    assert.equal(report.droppedTotal, report.droppedLines);
    // Every request answered meanwhile has its line, or is among those the report counts; the
    // lines that were held arrived before the report.
    const reportAt = service.logs.indexOf(report);
    const lineAt = new Map(service.logs.map((l, i) => [l.reqId, i]));
    const missing = sent.filter((id) => !lineAt.has(id));
    // None missing that the report does not count. The report may count a few more: lines that
    // are not a request's (a background loop's warning on a busy machine: one in a CI run on
    // Node.js 20.19) are dropped the same way.
    const reported = Number(report.droppedLines);
    assert.ok(
      missing.length <= reported && reported - missing.length <= 5,
      `${missing.length} of ${sent.length} request lines missing, ${reported} reported dropped`,
    );
    assert.ok(missing.length > 0, 'request lines were dropped');
    assert.ok(
      sent.every((id) => !lineAt.has(id) || lineAt.get(id)! < reportAt),
      'every held line before the report',
    );

    // Unread again, and SIGTERM: the process ends in time, as if stdout were read.
    service.child.stdout!.pause();
    await fillUntilDropping(await droppedSoFar());
    const signalled = Date.now();
    service.child.kill('SIGTERM');
    const code = await Promise.race([
      service.exited,
      new Promise((resolve) => setTimeout(() => resolve('still running 15 s after SIGTERM'), 15_000).unref()),
    ]);
    assert.equal(code, 0);
    t.diagnostic(`exited ${Date.now() - signalled} ms after SIGTERM with stdout unread (timeout 3000 ms)`);
  } finally {
    await service.stop();
  }
});

test('a stop while the reader is behind: every held line is written before the process ends, the last one included', async () => {
  const service = await spawnService({
    ADMIN_TOKEN,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  });
  try {
    service.child.stdout!.pause();
    // More request lines than the pipe holds (about 200 kB): the rest wait in the service.
    const ids: unknown[] = [];
    for (let round = 0; round < 40; round++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          service.call('GET', '/api/admin/v1/partners', {
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
            signal: AbortSignal.timeout(10_000),
          }),
        ),
      );
      for (const answer of answers) ids.push(answer.headers['x-request-id']);
    }
    service.child.kill('SIGTERM');
    // The reader comes back at once, slowly, while the process stops: every 20 ms it takes what
    // has arrived, then pauses. All that has arrived: pausing after each chunk instead took one
    // chunk of the stream's buffer per 20 ms, which on a busy machine held many small ones (up to
    // its 64 KiB highWaterMark on Node.js 22 and later), so the reader stopped taking from the
    // pipe for over a second, and the service, seeing nothing taken, rightly gave up (CI, once).
    const stdout = service.child.stdout!;
    let pausing = false;
    stdout.on('data', () => {
      if (pausing) return;
      pausing = true;
      setImmediate(() => {
        stdout.pause();
        setTimeout(() => {
          pausing = false;
          stdout.resume();
        }, 20);
      });
    });
    stdout.resume();
    assert.equal(await service.exited, 0);
    // The last chunk read may come after the exit: the stream's end is what says it is all here.
    if (!service.child.stdout!.readableEnded)
      await new Promise((resolve) => service.child.stdout!.once('end', resolve));
    const logged = new Set(service.logs.filter((l) => l.msg === 'request').map((l) => l.reqId));
    const missing = ids.filter((id) => !logged.has(id));
    assert.deepEqual(missing.length, 0, `${missing.length} of ${ids.length} request lines missing`);
    assert.equal(service.logs.at(-1)?.msg, 'stopped', 'the last line is the last one written');
  } finally {
    await service.stop();
  }
});
