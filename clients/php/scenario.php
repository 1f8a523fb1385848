<?php

declare(strict_types=1);

/*
 * The driver the shared client scenario (test/clients.process.test.ts) runs; not part of the
 * public API. `php scenario.php <track|iterate|verify|get>` with TRACKWAY_URL, TRACKWAY_API_KEY,
 * PIXEL_ID (and COUNT / EVENT_ID); prints one JSON object on its last line of stdout.
 */

require __DIR__ . '/autoload.php';

use Trackway\Client;
use Trackway\Exception\WebhookVerificationException;
use Trackway\Webhook;

function env(string $name): string
{
    $value = getenv($name);
    if ($value === false || $value === '') {
        fwrite(STDERR, "scenario: $name is not set\n");
        exit(2);
    }
    return $value;
}

function client(): Client
{
    // Retries enough to outlast a server that is down for ~10 s: 20 retries, steps capped at 2 s.
    return new Client(env('TRACKWAY_API_KEY'), env('TRACKWAY_URL'), [
        'max_retries' => 20,
        'retry_base_delay' => 0.2,
        'retry_max_delay' => 2.0,
        'timeout' => 10.0,
    ]);
}

function out(array $result): void
{
    echo json_encode($result, JSON_UNESCAPED_SLASHES), "\n";
}

$step = $argv[1] ?? '';
switch ($step) {
    case 'track':
        $client = client();
        $pixelId = env('PIXEL_ID');
        $count = (int) env('COUNT');
        $results = [];
        for ($i = 0; $i < $count; $i++) {
            $results[] = $client->track(['pixel_id' => $pixelId, 'event_name' => 'Purchase', 'value' => $i, 'currency' => 'USD']);
        }
        $client->close();
        $ok = 0;
        $errors = [];
        foreach ($results as $result) {
            if ($result->isOk()) {
                $ok++;
            } elseif (count($errors) < 5) {
                $errors[] = "{$result->status()} {$result->error()}: {$result->message()}";
            }
        }
        out(['ok' => $ok, 'failed' => $count - $ok, 'errors' => $errors]);
        break;

    case 'iterate':
        $count = 0;
        $ids = [];
        foreach (client()->events->iterate(env('PIXEL_ID'), ['limit' => 100]) as $event) {
            $count++;
            $ids[$event['event_id']] = true;
        }
        out(['count' => $count, 'distinct_event_ids' => count($ids)]);
        break;

    case 'verify':
        $input = json_decode((string) stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
        try {
            $payload = Webhook::verify($input['body'], $input['headers'], $input['secrets']);
            out(['ok' => true, 'event' => $payload['event'] ?? null]);
        } catch (WebhookVerificationException $error) {
            out(['ok' => false, 'code' => $error->reason, 'message' => $error->getMessage()]);
        }
        break;

    case 'get':
        $event = client()->event(env('PIXEL_ID'), env('EVENT_ID'));
        out(['event_id' => $event['event_id'], 'event_name' => $event['event_name']]);
        break;

    default:
        fwrite(STDERR, "usage: php scenario.php track|iterate|verify|get\n");
        exit(2);
}
