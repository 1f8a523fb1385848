<?php

declare(strict_types=1);

namespace Trackway;

use Trackway\Internal\Requester;

/** `$client->events`: reading stored events, and sending one event unbatched. */
final class Events
{
    /** @internal */
    public function __construct(private readonly Requester $client)
    {
    }

    /**
     * One page, newest first: `['events' => [...], 'total' => n, 'limit' => n, 'offset' => n]`.
     *
     * @param array{limit?: int, offset?: int, start_date?: string, end_date?: string, event_name?: string} $query
     * @return array<string, mixed>
     */
    public function list(string $pixelId, array $query = []): array
    {
        return $this->client->request('GET', self::path($pixelId), null, $query);
    }

    /**
     * Every page of list(), fetched as the loop asks for it.
     *
     * @param array<string, scalar> $query
     * @return \Generator<int, array<string, mixed>>
     */
    public function pages(string $pixelId, array $query = []): \Generator
    {
        $offset = (int) ($query['offset'] ?? 0);
        for (;;) {
            $page = $this->list($pixelId, ['offset' => $offset] + $query);
            yield $page;
            $count = count($page['events'] ?? []);
            $offset += $count;
            if ($count === 0 || $offset >= (int) ($page['total'] ?? 0)) {
                return;
            }
        }
    }

    /**
     * Every matching event, newest first: `foreach ($client->events->iterate('px_…') as $event)`.
     *
     * Pages are newest first by offset, so events stored while the loop runs push older ones
     * down: the next page may start with events already yielded. Those are skipped (compared
     * with the previous page), so each event is yielded once as long as fewer than a page's worth
     * arrive between two pages.
     *
     * @param array<string, scalar> $query
     * @return \Generator<int, array<string, mixed>>
     */
    public function iterate(string $pixelId, array $query = []): \Generator
    {
        $previous = [];
        foreach ($this->pages($pixelId, $query) as $page) {
            $seen = [];
            foreach ($page['events'] ?? [] as $event) {
                $id = (string) ($event['event_id'] ?? '');
                $seen[$id] = true;
                if (!isset($previous[$id])) {
                    yield $event;
                }
            }
            $previous = $seen;
        }
    }

    /**
     * One stored event with its forwarding entries.
     *
     * @return array<string, mixed>
     */
    public function get(string $pixelId, string $eventId): array
    {
        return $this->client->request('GET', self::path($pixelId) . '/' . rawurlencode($eventId));
    }

    /**
     * One event at once, unbatched (`POST /v1/track`); an `event_id` is made when none is given,
     * so the retries of a 5xx or network error store it once.
     *
     * @param array<string, mixed> $event
     * @return array<string, mixed> `['success' => true, 'event_id' => …, 'message' => …]`
     */
    public function track(array $event): array
    {
        return $this->client->request('POST', '/v1/track', Client::withEventId($event), [], true);
    }

    private static function path(string $pixelId): string
    {
        return '/v1/pixels/' . rawurlencode($pixelId) . '/events';
    }
}
