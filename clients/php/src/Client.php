<?php

declare(strict_types=1);

namespace Trackway;

use Trackway\Exception\ApiException;
use Trackway\Exception\NetworkException;
use Trackway\Internal\Requester;
use Trackway\Internal\Transport;

/**
 * Trackway's API client: batched `track()` plus a method for each resource.
 *
 * PHP has no timers, so `track()` queues the event and sends a batch (gzipped, to
 * `POST /v1/track/batch`) when `max_batch_size` events are queued, or when an event is tracked
 * more than `flush_interval` seconds after the oldest queued one; `flush()`, `close()` and the end
 * of the script (a shutdown function) send the rest. Each event carries an `event_id` before it is
 * queued, so a batch resent after a lost answer is deduplicated by the server, never stored twice.
 */
final class Client
{
    /** The server's batch limits are 1,000 events and 524,288 decoded bytes; stay under both. */
    public const MAX_BATCH_EVENTS = 1000;
    private const MAX_BATCH_BYTES = 500_000;

    /** Every option and its default; an unknown key is refused rather than ignored. */
    private const DEFAULTS = [
        'max_batch_size' => 100,      // events per batch, 1 to 1,000
        'flush_interval' => 1.0,      // seconds the oldest queued event may wait (checked on track())
        'gzip' => true,               // gzip batches (when ext-zlib is loaded)
        'max_retries' => 10,          // retries after the first attempt
        'retry_base_delay' => 0.2,    // seconds, first backoff step, doubled each retry
        'retry_max_delay' => 10.0,    // seconds, longest backoff step
        'max_retry_wait' => 60.0,     // a 429 asking to wait longer is reported, not slept on
        'timeout' => 30.0,            // seconds per request (connect and each read)
        'on_result' => null,          // callable(TrackResult, array $event): void, once per event
    ];

    public readonly string $baseUrl;
    public readonly Pixels $pixels;
    public readonly Events $events;
    public readonly Webhooks $webhooks;

    private readonly Transport $transport;
    private readonly Requester $requester;
    private readonly int $maxBatchSize;
    private readonly float $flushInterval;
    private readonly bool $gzip;
    private readonly int $maxRetries;
    /** @var (callable(TrackResult, array<string, mixed>): void)|null */
    private $onResult;

    /** @var list<array{event: array<string, mixed>, json: string, result: TrackResult}> */
    private array $queue = [];
    private ?float $oldestQueuedAt = null;
    private bool $closed = false;

    /**
     * @param string $apiKey A `tw_live_…` key.
     * @param string $baseUrl The server's origin, without `/v1`.
     * @param array<string, mixed> $options See DEFAULTS above and the README.
     */
    public function __construct(string $apiKey, string $baseUrl = 'http://127.0.0.1:8080', array $options = [])
    {
        if ($apiKey === '') {
            throw new \InvalidArgumentException('Trackway: an API key is required');
        }
        $unknown = array_diff(array_keys($options), array_keys(self::DEFAULTS));
        if ($unknown !== []) {
            throw new \InvalidArgumentException('Trackway: unknown option ' . implode(', ', $unknown));
        }
        $o = $options + self::DEFAULTS;
        if ($o['on_result'] !== null && !is_callable($o['on_result'])) {
            throw new \InvalidArgumentException('Trackway: on_result must be callable');
        }
        $this->baseUrl = rtrim($baseUrl, '/');
        $this->maxBatchSize = max(1, min(self::MAX_BATCH_EVENTS, (int) $o['max_batch_size']));
        $this->flushInterval = (float) $o['flush_interval'];
        $this->gzip = (bool) $o['gzip'] && function_exists('gzencode');
        $this->maxRetries = max(0, (int) $o['max_retries']);
        $this->onResult = $o['on_result'];
        $this->transport = new Transport(
            $this->baseUrl,
            $apiKey,
            (float) $o['timeout'],
            $this->maxRetries,
            (float) $o['retry_base_delay'],
            (float) $o['retry_max_delay'],
            (float) $o['max_retry_wait'],
        );
        $this->requester = new Requester($this->transport);
        $this->pixels = new Pixels($this->requester);
        $this->events = new Events($this->requester);
        $this->webhooks = new Webhooks($this->requester);

        // Events still queued when the script ends are sent then. A weak reference, so a client
        // that goes out of scope earlier is flushed by __destruct instead of living on.
        $self = \WeakReference::create($this);
        register_shutdown_function(static function () use ($self): void {
            $self->get()?->close();
        });
    }

    public function __destruct()
    {
        if ($this->queue !== []) {
            $this->flush();
        }
    }

    /**
     * Queues an event and returns its result, pending until the event's batch is answered
     * (at the latest by flush() or close()). Never throws for what the server answers: a refused
     * event settles with `isOk() === false`. An `event_id` is made when none is given.
     *
     * @param array<string, mixed> $event `['pixel_id' => 'px_…', 'event_name' => 'Purchase', …]`
     * @throws \LogicException after close()
     * @throws \InvalidArgumentException when the event cannot be encoded as JSON
     */
    public function track(array $event): TrackResult
    {
        if ($this->closed) {
            throw new \LogicException('Trackway: track() after close()');
        }
        $event = self::withEventId($event);
        $result = new TrackResult((string) $event['event_id']);
        $this->queue[] = ['event' => $event, 'json' => self::encode($event), 'result' => $result];
        $now = microtime(true);
        $this->oldestQueuedAt ??= $now;
        if (count($this->queue) >= $this->maxBatchSize) {
            while (count($this->queue) >= $this->maxBatchSize) {
                $this->send($this->takeBatch());
            }
            $this->oldestQueuedAt = $this->queue === [] ? null : $now;
        } elseif ($now - $this->oldestQueuedAt >= $this->flushInterval) {
            $this->flush();
        }
        return $result;
    }

    /**
     * Sends everything queued and returns those events' results, all settled.
     *
     * @return list<TrackResult>
     */
    public function flush(): array
    {
        $settled = [];
        while ($this->queue !== []) {
            $batch = $this->takeBatch();
            $this->send($batch);
            foreach ($batch as $item) {
                $settled[] = $item['result'];
            }
        }
        $this->oldestQueuedAt = null;
        return $settled;
    }

    /**
     * Flushes, then refuses further track() calls.
     *
     * @return list<TrackResult>
     */
    public function close(): array
    {
        $this->closed = true;
        return $this->flush();
    }

    /** Events queued and not yet sent. */
    public function pendingEvents(): int
    {
        return count($this->queue);
    }

    /**
     * What `track` would store for this event and what each destination would be sent, without
     * storing or sending anything (`POST /v1/track/validate`).
     *
     * @param array<string, mixed> $event
     * @return array<string, mixed>
     */
    public function validate(array $event): array
    {
        return $this->request('POST', '/v1/track/validate', $event, [], true);
    }

    /**
     * One stored event (`GET /v1/pixels/{pixel_id}/events/{event_id}`).
     *
     * @return array<string, mixed>
     */
    public function event(string $pixelId, string $eventId): array
    {
        return $this->events->get($pixelId, $eventId);
    }

    /**
     * Any route, for what has no method yet. `$retryServerErrors`: resend on a 5xx or network
     * error (default: for GET, PATCH and DELETE, which are safe to send twice); 429 is always
     * retried. Throws ApiException for an error answer, NetworkException when none came.
     *
     * @param array<string, mixed>|null $body
     * @param array<string, scalar|null> $query
     * @return array<string, mixed>
     */
    public function request(string $method, string $path, ?array $body = null, array $query = [], ?bool $retryServerErrors = null): array
    {
        return $this->requester->request($method, $path, $body, $query, $retryServerErrors);
    }

    /**
     * The event with an `event_id`: `evt_` + a UUIDv7 when it has none (time-ordered, kind to
     * the server's indexes).
     *
     * @param array<string, mixed> $event
     * @return array<string, mixed>
     */
    public static function withEventId(array $event): array
    {
        if (!isset($event['event_id'])) {
            $event['event_id'] = self::newEventId();
        }
        return $event;
    }

    public static function newEventId(): string
    {
        $bytes = random_bytes(16);
        $ms = (int) floor(microtime(true) * 1000);
        $time = str_pad(dechex($ms), 12, '0', STR_PAD_LEFT);
        $hex = $time . bin2hex(substr($bytes, 6));
        $hex[12] = '7';
        $hex[16] = dechex(8 | (hexdec($hex[16]) & 3));
        return sprintf(
            'evt_%s-%s-%s-%s-%s',
            substr($hex, 0, 8),
            substr($hex, 8, 4),
            substr($hex, 12, 4),
            substr($hex, 16, 4),
            substr($hex, 20, 12),
        );
    }

    /** @internal JSON as the server wants it: an empty PHP array under an object field is `{}`. */
    public static function encode(array $value): string
    {
        foreach (['custom_data', 'user_data', 'context'] as $objectField) {
            if (($value[$objectField] ?? null) === []) {
                $value[$objectField] = new \stdClass();
            }
        }
        try {
            return json_encode(
                $value,
                JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION,
            );
        } catch (\JsonException $error) {
            throw new \InvalidArgumentException('Trackway: cannot encode as JSON: ' . $error->getMessage(), 0, $error);
        }
    }

    /** @return list<array{event: array<string, mixed>, json: string, result: TrackResult}> */
    private function takeBatch(): array
    {
        $count = 0;
        $bytes = 12;
        $queued = count($this->queue);
        while ($count < $this->maxBatchSize && $count < $queued) {
            $next = strlen($this->queue[$count]['json']) + 1;
            if ($count > 0 && $bytes + $next > self::MAX_BATCH_BYTES) {
                break;
            }
            $bytes += $next;
            $count++;
        }
        return array_splice($this->queue, 0, $count);
    }

    /**
     * Sends `$batch` until every event in it has a final answer. Events the server answers with
     * a 5xx in their slot ("not stored; safe to retry") are sent again with the same ids.
     *
     * @param list<array{event: array<string, mixed>, json: string, result: TrackResult}> $batch
     */
    private function send(array $batch): void
    {
        $waiting = $batch;
        for ($round = 0; $waiting !== []; $round++) {
            $raw = '{"events":[' . implode(',', array_column($waiting, 'json')) . ']}';
            try {
                $response = $this->transport->exchange(
                    'POST',
                    '/v1/track/batch',
                    $this->gzip ? gzencode($raw, 1) : $raw,
                    $this->gzip ? ['Content-Encoding' => 'gzip'] : [],
                    true,
                );
            } catch (ApiException $error) {
                if ($error->status === 413 && count($waiting) > 1) {
                    // Bigger than the server takes after all: halve it and send both halves.
                    $half = intdiv(count($waiting) + 1, 2);
                    $this->send(array_slice($waiting, 0, $half));
                    $this->send(array_slice($waiting, $half));
                    return;
                }
                foreach ($waiting as $item) {
                    $item['result']->settleFailed($error->status, $error->error, $error->getMessage(), $error->field);
                    $this->notify($item);
                }
                return;
            } catch (NetworkException $error) {
                foreach ($waiting as $item) {
                    $item['result']->settleFailed(0, 'Network error', $error->getMessage());
                    $this->notify($item);
                }
                return;
            }
            $results = is_array($response->body['results'] ?? null) ? $response->body['results'] : [];
            $retry = [];
            foreach ($waiting as $index => $item) {
                $slot = is_array($results[$index] ?? null) ? $results[$index] : null;
                $status = is_int($slot['status'] ?? null) ? $slot['status'] : 0;
                if ($status === 200) {
                    $item['result']->settleOk(
                        ($slot['deduplicated'] ?? false) === true,
                        (string) ($slot['message'] ?? ''),
                        is_array($slot['warnings'] ?? null) ? array_values($slot['warnings']) : [],
                    );
                } elseif ($status >= 500 && $round < $this->maxRetries) {
                    $retry[] = $item;
                    continue;
                } else {
                    $item['result']->settleFailed(
                        $status,
                        (string) ($slot['error'] ?? 'Invalid response'),
                        (string) ($slot['message'] ?? 'No result for this event in the batch response'),
                        isset($slot['field']) ? (string) $slot['field'] : null,
                    );
                }
                $this->notify($item);
            }
            $waiting = $retry;
            if ($waiting !== []) {
                $this->transport->sleep($this->transport->backoff($round));
            }
        }
    }

    /** @param array{event: array<string, mixed>, json: string, result: TrackResult} $item */
    private function notify(array $item): void
    {
        if ($this->onResult === null) {
            return;
        }
        try {
            ($this->onResult)($item['result'], $item['event']);
        } catch (\Throwable) {
            // A throwing callback must not stall the queue; it is the caller's code to fix.
        }
    }
}
