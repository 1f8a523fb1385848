import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSender } from './sender.ts';
import { checkDestination, guardedLookup, isForbiddenAddress } from './ssrf.ts';

const strict = { allowPrivate: false, allowHttp: false };

describe('SSRF guard', () => {
  it("refuses and allows what svix's is_allowed test does", () => {
    // svix-webhooks server/svix-server/src/core/webhook_http_client.rs, `is_allowed_test`.
    const refused = [
      '10.254.0.0',
      '192.168.10.65',
      '172.16.10.65',
      '0.1.2.3',
      '0.0.0.0',
      '127.0.0.1',
      '169.254.45.1',
      '255.255.255.255',
      '192.0.2.255',
      '198.51.100.65',
      '203.0.113.6',
      '100.100.0.0',
      '192.0.0.0',
      '192.0.0.255',
      '250.10.20.30',
      '198.18.0.0',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:0.0.0.1',
    ];
    const allowed = ['1.1.1.1', '0:0:0:ffff:0:0:0:1', '2001:4860:4860::8888', '::ffff:8.8.8.8'];
    for (const ip of refused) assert.equal(isForbiddenAddress(ip), true, ip);
    for (const ip of allowed) assert.equal(isForbiddenAddress(ip), false, ip);
  });

  it('also refuses multicast, IPv6 private ranges and IPv4 hidden in IPv6', () => {
    const refused = [
      '224.0.0.1',
      '239.255.255.250',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'fec0::1',
      'ff02::1',
      '2001:db8::1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::7f00:1',
      '64:ff9b::a00:1',
      '2002:7f00:1::',
      '2002:c0a8:101::1',
      '::127.0.0.1',
      '2001:2::1', // benchmarking
      '2001:10::1', // ORCHID
      '3fff::1', // documentation (RFC 9637)
      '5f00::1', // SRv6
      '64:ff9b:1::a00:1', // local-use NAT64
      '::ffff:0:a00:1', // IPv4-translated
      'not-an-ip',
    ];
    for (const ip of refused) assert.equal(isForbiddenAddress(ip), true, ip);
    for (const ip of ['8.8.8.8', '93.184.216.34', '64:ff9b::808:808', '2002:808:808::1']) {
      assert.equal(isForbiddenAddress(ip), false, ip);
    }
  });

  it('checks destinations at registration, naming the url field', async () => {
    const reject = async (url: string, policy = strict, message?: RegExp) => {
      await assert.rejects(
        checkDestination(url, policy, async () => [{ address: '10.0.0.5', family: 4 }]),
        (error: Error & { field?: string }) => {
          assert.equal(error.field, 'url');
          assert.match(error.message, /^Invalid field: url /);
          if (message) assert.match(error.message, message);
          return true;
        },
      );
    };
    await reject('https://127.0.0.1/hook', strict, /must resolve to a public address/);
    await reject('https://[::ffff:10.0.0.1]/hook', strict, /must resolve to a public address/);
    await reject('http://93.184.216.34/hook', strict, /must use https/);
    await reject('ftp://example.com/', strict, /must use https/);
    await reject('not a url', strict, /absolute URL/);
    await reject('https://user:pw@93.184.216.34/', strict, /credentials/);
    await reject('https://evil.test/hook', strict, /must resolve to a public address/);
    const ok = await checkDestination('http://93.184.216.34/hook', {
      allowPrivate: false,
      allowHttp: true,
    });
    assert.equal(ok.hostname, '93.184.216.34');
    const local = await checkDestination('http://127.0.0.1:9999/hook', {
      allowPrivate: true,
      allowHttp: true,
    });
    assert.equal(local.port, '9999');
    const resolved = await checkDestination('https://hooks.example.com/x', strict, async () => [
      { address: '93.184.216.34', family: 4 },
    ]);
    assert.equal(resolved.hostname, 'hooks.example.com');
  });

  it('answers the same for a name that does not resolve and one that resolves inside', async () => {
    // Two answers would let a caller map which internal names exist by registering them.
    const messageFor = (lookupAll: () => Promise<Array<{ address: string; family: number }>>) =>
      checkDestination('https://db.corp.internal/hook', strict, lookupAll).then(
        () => assert.fail('accepted'),
        (error: Error) => error.message,
      );
    const internal = await messageFor(async () => [{ address: '10.0.0.5', family: 4 }]);
    const unknown = await messageFor(async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    });
    const empty = await messageFor(async () => []);
    assert.equal(internal, 'Invalid field: url must resolve to a public address');
    assert.equal(unknown, internal);
    assert.equal(empty, internal);
  });

  it('refuses forbidden addresses inside the connect-time lookup', async () => {
    const lookup = guardedLookup(strict);
    const result = await new Promise<Error | null>((resolve) =>
      lookup('localhost', { all: true }, (error) => resolve(error)),
    );
    assert.equal((result as Error & { code?: string })?.code, 'ESSRF');
    const relaxed = guardedLookup({ allowPrivate: true, allowHttp: true });
    const ok = await new Promise<Error | null>((resolve) =>
      relaxed('127.0.0.1', {}, (error) => resolve(error)),
    );
    assert.equal(ok, null);
  });

  it('refuses at connect time a destination written as an IP, which has no lookup', async () => {
    // Registered while private (or plain http) destinations were allowed, then sent once they
    // are not: Node does no DNS lookup for an IP address, so guardedLookup never runs for it.
    const sender = createSender(strict, { connectMs: 500, totalMs: 1_000 });
    try {
      for (const [url, reason] of [
        ['https://127.0.0.1:9/hook', 'Refused to connect to 127.0.0.1: a private or reserved'],
        ['https://[::ffff:10.0.0.1]/hook', 'Refused to connect to ::ffff:a00:1: a private'],
        ['http://93.184.216.34/hook', 'plain http destinations are not allowed'],
      ] as const) {
        const result = await sender.send(url, {}, '{}');
        assert.equal(result.statusCode, null, url);
        assert.ok(result.error?.startsWith('ESSRF: '), `${url}: ${result.error}`);
        assert.ok(result.error?.includes(reason), `${url}: ${result.error}`);
      }
    } finally {
      await sender.close();
    }
  });
});
