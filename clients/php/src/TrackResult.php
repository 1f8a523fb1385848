<?php

declare(strict_types=1);

namespace Trackway;

/**
 * What happened to one tracked event. `Client::track()` returns it at once, pending; it is
 * settled when the event's batch is answered — at the latest by the next `flush()` or `close()`,
 * which return the results they settled. Until then `isPending()` is true and the outcome
 * getters return null.
 */
final class TrackResult implements \JsonSerializable
{
    private bool $pending = true;
    private ?bool $ok = null;
    private ?int $status = null;
    private bool $deduplicated = false;
    private ?string $error = null;
    private ?string $message = null;
    private ?string $field = null;
    /** @var list<string> */
    private array $warnings = [];

    public function __construct(public readonly string $eventId)
    {
    }

    public function isPending(): bool
    {
        return $this->pending;
    }

    /** True once the server stored the event (or already had its event_id). */
    public function isOk(): bool
    {
        return $this->ok === true;
    }

    /** The status the server gave this event (200, 400, 404, 409, 429, 5xx), or 0 when it never answered. */
    public function status(): ?int
    {
        return $this->status;
    }

    /** The server already had this event_id; the first event was kept. */
    public function isDeduplicated(): bool
    {
        return $this->deduplicated;
    }

    /** The short error name when not ok, e.g. `Invalid request`, `Network error`. */
    public function error(): ?string
    {
        return $this->error;
    }

    public function message(): ?string
    {
        return $this->message;
    }

    /** The field at fault, when the event was refused for one field. */
    public function field(): ?string
    {
        return $this->field;
    }

    /** @return list<string> */
    public function warnings(): array
    {
        return $this->warnings;
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        $out = ['event_id' => $this->eventId, 'pending' => $this->pending, 'ok' => $this->ok, 'status' => $this->status];
        if ($this->ok === true) {
            $out += ['deduplicated' => $this->deduplicated, 'message' => $this->message];
            if ($this->warnings !== []) {
                $out['warnings'] = $this->warnings;
            }
        } elseif ($this->ok === false) {
            $out += ['error' => $this->error, 'message' => $this->message];
            if ($this->field !== null) {
                $out['field'] = $this->field;
            }
        }
        return $out;
    }

    public function jsonSerialize(): array
    {
        return $this->toArray();
    }

    /**
     * @internal Called by the client once, when the batch is answered.
     * @param list<string> $warnings
     */
    public function settleOk(bool $deduplicated, string $message, array $warnings = []): void
    {
        $this->pending = false;
        $this->ok = true;
        $this->status = 200;
        $this->deduplicated = $deduplicated;
        $this->message = $message;
        $this->warnings = $warnings;
    }

    /** @internal Called by the client once, when the event failed for good. */
    public function settleFailed(int $status, string $error, string $message, ?string $field = null): void
    {
        $this->pending = false;
        $this->ok = false;
        $this->status = $status;
        $this->error = $error;
        $this->message = $message;
        $this->field = $field;
    }
}
