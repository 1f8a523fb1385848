<?php

declare(strict_types=1);

namespace Trackway\Tests;

use Trackway\Client;
use Trackway\Exception\ApiException;
use Trackway\Exception\NetworkException;
use Trackway\TrackResult;

// Batching and retries against a stand-in server on a real socket (tests/fixtures/server.php).

/** Small delays, so the retry tests run in well under a second each. */
function fastClient(string $url, array $options = []): Client
{
    return new Client('tw_live_test', $url, $options + ['retry_base_delay' => 0.02, 'retry_max_delay' => 0.1]);
}

/** @return list<array<string, mixed>> the events of each logged batch request */
function batches(StubServer $server): array
{
    $out = [];
    foreach ($server->requests() as $request) {
        if ($request['path'] === '/v1/track/batch') {
            $out[] = $request['body']['events'];
        }
    }
    return $out;
}

function purchase(int $i): array
{
    return ['pixel_id' => 'px_1', 'event_name' => 'Purchase', 'value' => $i, 'currency' => 'USD'];
}

test('track: a full batch goes at once, the rest on flush; gzip, key and an event_id on each', static function (): void {
    $server = new StubServer();
    $client = fastClient($server->url);
    $results = [];
    for ($i = 0; $i < 250; $i++) {
        $results[] = $client->track(purchase($i));
    }
    assertSame(2, count($server->requests()), 'requests before flush');
    assertSame(50, $client->pendingEvents(), 'queued');
    assertTrue($results[0]->isOk() && !$results[0]->isPending(), 'a sent event is settled');
    assertTrue($results[249]->isPending() && $results[249]->status() === null, 'a queued event is pending');
    $flushed = $client->flush();
    assertSame(50, count($flushed), 'flush returns what it sent');
    assertSame($results[249], $flushed[49], 'the same result objects');
    $requests = $server->requests();
    assertSame(3, count($requests), 'requests');
    foreach ($requests as $request) {
        assertSame('gzip', $request['encoding'], 'content-encoding');
        assertSame('Bearer tw_live_test', $request['authorization'], 'authorization');
        assertSame('application/json', $request['content_type'], 'content-type');
    }
    $sent = array_merge(...batches($server));
    assertSame(250, count($sent), 'events sent');
    $ids = array_column($sent, 'event_id');
    assertSame(250, count(array_unique($ids)), 'distinct event ids');
    foreach ($ids as $index => $id) {
        assertTrue(preg_match('/^evt_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $id) === 1, "UUIDv7 event id: $id");
        assertSame($results[$index]->eventId, $id, 'the result names the event id sent');
    }
    assertSame(range(0, 249), array_column($sent, 'value'), 'order kept');
    foreach ($results as $result) {
        assertTrue($result->isOk() && $result->status() === 200 && $result->message() === 'Event tracked', 'ok');
    }
});

test('track: a caller event_id is kept; empty custom_data is sent as an object', static function (): void {
    $server = new StubServer();
    $client = fastClient($server->url, ['gzip' => false]);
    $result = $client->track(purchase(1) + ['event_id' => 'order-1', 'custom_data' => []]);
    assertSame('order-1', $result->eventId, 'event id');
    $client->close();
    $request = $server->requests()[0];
    assertSame('', $request['encoding'], 'not gzipped when gzip is off');
    assertTrue(str_contains($request['raw'], '"custom_data":{}'), 'custom_data {} in ' . $request['raw']);
    assertSame('order-1', $request['body']['events'][0]['event_id'], 'sent id');
});

test('track: an event tracked after flush_interval sends the queue (the time bound)', static function (): void {
    $server = new StubServer();
    $client = fastClient($server->url, ['flush_interval' => 0.2]);
    $first = $client->track(purchase(1));
    assertSame(0, count($server->requests()), 'nothing sent at once');
    usleep(250_000);
    $client->track(purchase(2));
    assertSame(1, count($server->requests()), 'sent on the next track()');
    assertSame(2, count(batches($server)[0]), 'both events in that batch');
    assertTrue($first->isOk(), 'settled');
});

test('track: a 429 is waited out for retry_after, then the same events are resent', static function (): void {
    $server = new StubServer(['POST /v1/track/batch' => [
        ['status' => 429, 'body' => ['error' => 'Rate limit exceeded', 'message' => 'Too many requests', 'retry_after' => 1], 'headers' => ['Retry-After' => '1']],
    ]]);
    $client = fastClient($server->url);
    $result = $client->track(purchase(1));
    $client->flush();
    $requests = $server->requests();
    assertSame(2, count($requests), 'requests');
    assertTrue($requests[1]['t'] - $requests[0]['t'] >= 1.0, 'resent after >= 1 s, was ' . ($requests[1]['t'] - $requests[0]['t']));
    assertSame($requests[0]['body'], $requests[1]['body'], 'same events, same ids');
    assertTrue($result->isOk(), 'ok in the end');
});

test('track: a 429 asking for longer than max_retry_wait is reported, not slept on', static function (): void {
    $server = new StubServer(['POST /v1/track/batch' => [
        ['status' => 429, 'body' => ['error' => 'Rate limit exceeded', 'message' => 'Daily limit reached', 'retry_after' => 3600]],
    ]]);
    $client = fastClient($server->url);
    $result = $client->track(purchase(1));
    $started = microtime(true);
    $client->flush();
    // Not slept on: far below the 3,600 s asked (and max_retry_wait's 60 s), with room for a
    // loaded machine's slow round trip.
    assertTrue(microtime(true) - $started < 10, 'did not wait');
    assertSame(429, $result->status(), 'status');
    assertSame('Rate limit exceeded', $result->error(), 'error');
    assertSame(1, count($server->requests()), 'requests');
});

test('track: 5xx answers are retried with the same event ids until one is stored', static function (): void {
    $server = new StubServer(['POST /v1/track/batch' => [
        ['status' => 503, 'body' => ['error' => 'Service unavailable', 'message' => 'Storage unreachable']],
        ['status' => 500, 'body' => null],
    ]]);
    $client = fastClient($server->url);
    $result = $client->track(purchase(1));
    $client->close();
    $batches = batches($server);
    assertSame(3, count($batches), 'attempts');
    assertSame($batches[0], $batches[2], 'identical resend');
    assertTrue($result->isOk(), 'ok');
});

test('track: a lost answer (timeout) is resent with the same ids', static function (): void {
    $server = new StubServer(['POST /v1/track/batch' => [['sleep' => 1.0]]]);
    $client = fastClient($server->url, ['timeout' => 0.3]);
    $result = $client->track(purchase(1));
    $client->close();
    $batches = batches($server);
    assertSame(2, count($batches), 'attempts');
    assertSame($batches[0], $batches[1], 'identical resend');
    assertTrue($result->isOk(), 'ok');
});

test('track: another 4xx is never retried, and each event carries it', static function (): void {
    $server = new StubServer(['POST /v1/track/batch' => [
        ['status' => 401, 'body' => ['error' => 'Unauthorized', 'message' => 'Invalid API key']],
    ]]);
    $seen = [];
    $client = fastClient($server->url, ['on_result' => static function (TrackResult $result, array $event) use (&$seen): void {
        $seen[] = [$result->status(), $event['value']];
    }]);
    $a = $client->track(purchase(1));
    $b = $client->track(purchase(2));
    $client->close();
    assertSame(1, count($server->requests()), 'one attempt');
    foreach ([$a, $b] as $result) {
        assertSame(false, $result->isOk(), 'failed');
        assertSame(401, $result->status(), 'status');
        assertSame('Unauthorized', $result->error(), 'error');
        assertSame('Invalid API key', $result->message(), 'message');
    }
    assertSame([[401, 1], [401, 2]], $seen, 'on_result saw each event');
});

test('track: an event refused in its slot settles with the slot; a 500 slot alone is resent', static function (): void {
    $server = new StubServer(['POST /v1/track/batch' => [['slots' => ['1' => 400, '2' => 500]]]]);
    $client = fastClient($server->url);
    $results = [$client->track(purchase(0)), $client->track(purchase(1)), $client->track(purchase(2))];
    $client->close();
    $batches = batches($server);
    assertSame(2, count($batches), 'attempts');
    assertSame([$results[2]->eventId], array_column($batches[1], 'event_id'), 'only the 500 slot resent');
    assertTrue($results[0]->isOk() && $results[2]->isOk(), 'others ok');
    assertSame(400, $results[1]->status(), 'slot status');
    assertSame('value', $results[1]->field(), 'slot field');
    assertSame('slot 1 refused', $results[1]->message(), 'slot message');
});

test('track: a 413 splits the batch in halves', static function (): void {
    $server = new StubServer(['POST /v1/track/batch' => [
        ['status' => 413, 'body' => ['error' => 'Payload too large', 'message' => 'Request body exceeds 524288 bytes']],
    ]]);
    $client = fastClient($server->url);
    for ($i = 0; $i < 5; $i++) {
        $client->track(purchase($i));
    }
    $results = $client->close();
    assertSame([5, 3, 2], array_map('count', batches($server)), 'batch sizes');
    assertSame(5, count(array_filter($results, static fn (TrackResult $r) => $r->isOk())), 'all ok');
});

test('track: no server at all settles events as network errors after the retries', static function (): void {
    $client = fastClient('http://127.0.0.1:' . freePort(), ['max_retries' => 2]);
    $result = $client->track(purchase(1));
    $client->close();
    assertSame(0, $result->status(), 'status');
    assertSame('Network error', $result->error(), 'error');
    assertTrue(str_contains((string) $result->message(), 'Connection refused'), 'message: ' . $result->message());
    assertThrows(\LogicException::class, static fn () => $client->track(purchase(2)));
});

test('requests: errors carry status, error, message and field; GET retried on 5xx, create not', static function (): void {
    $server = new StubServer([
        'GET /v1/pixels/px_gone' => [['status' => 502, 'body' => null]],
        'POST /v1/pixels' => [['status' => 500, 'body' => ['error' => 'Internal error', 'message' => 'boom']]],
        'POST /v1/track/validate' => [['status' => 400, 'body' => ['error' => 'Invalid request', 'message' => 'Missing required field: event_name', 'field' => 'event_name']]],
    ]);
    $client = fastClient($server->url);
    $error = assertThrows(ApiException::class, static fn () => $client->pixels->get('px_gone'));
    assertSame([404, 'Not found', 'Not found: /v1/pixels/px_gone', null], [$error->status, $error->error, $error->getMessage(), $error->field], 'the 404 after a retried 502');
    $error = assertThrows(ApiException::class, static fn () => $client->pixels->create(['name' => 'Shop', 'domain' => 'shop.example.com']));
    assertSame(500, $error->status, 'a create is not resent');
    $error = assertThrows(ApiException::class, static fn () => $client->validate(['pixel_id' => 'px_1']));
    assertSame([400, 'Invalid request', 'event_name'], [$error->status, $error->error, $error->field], 'validate error');
    $paths = array_map(static fn ($r) => $r['method'] . ' ' . $r['path'], $server->requests());
    assertSame(['GET /v1/pixels/px_gone', 'GET /v1/pixels/px_gone', 'POST /v1/pixels', 'POST /v1/track/validate'], $paths, 'requests');
    assertSame('px_new', $client->pixels->create(['name' => 'Shop', 'domain' => 'shop.example.com'])['id'], 'create');
});

test('requests: no server is a NetworkException', static function (): void {
    $client = fastClient('http://127.0.0.1:' . freePort(), ['max_retries' => 1]);
    assertThrows(NetworkException::class, static fn () => $client->pixels->list());
});

test('events: iterate walks every page once', static function (): void {
    $server = new StubServer([], 230);
    $client = fastClient($server->url);
    $ids = [];
    foreach ($client->events->iterate('px_1', ['limit' => 100]) as $event) {
        $ids[] = $event['event_id'];
    }
    assertSame(230, count($ids), 'events');
    assertSame(230, count(array_unique($ids)), 'distinct');
    $offsets = array_map(static fn ($r) => $r['query']['offset'], $server->requests());
    assertSame(['0', '100', '200'], $offsets, 'pages');
});

test('client: an unknown option is refused, not ignored', static function (): void {
    assertThrows(\InvalidArgumentException::class, static fn () => new Client('tw_live_x', 'http://127.0.0.1:1', ['batch_size' => 5]));
    assertThrows(\InvalidArgumentException::class, static fn () => new Client('', 'http://127.0.0.1:1'));
});

test('client: events still queued when the script ends are sent', static function (): void {
    $server = new StubServer();
    $script = '<?php require ' . var_export(__DIR__ . '/../autoload.php', true) . ';'
        . '$c = new Trackway\Client("tw_live_x", ' . var_export($server->url, true) . ');'
        . '$c->track(["pixel_id" => "px_1", "event_name" => "Lead"]); echo "tracked";';
    $file = tempnam(sys_get_temp_dir(), 'tw') . '.php';
    file_put_contents($file, $script);
    exec(escapeshellarg(PHP_BINARY) . ' ' . escapeshellarg($file), $output, $code);
    unlink($file);
    assertSame([0, ['tracked']], [$code, $output], 'script ran');
    assertSame(1, count(batches($server)), 'flushed at exit');
});

test('client: a client that goes out of scope sends what it queued', static function (): void {
    $server = new StubServer();
    (static function () use ($server): void {
        $client = new Client('tw_live_x', $server->url);
        $client->track(purchase(1));
    })();
    assertSame(1, count(batches($server)), 'flushed by the destructor');
});
