<?php

declare(strict_types=1);

namespace Trackway\Exception;

/**
 * The server answered with an error (`{error, message, field?}`), after any retries.
 * `getMessage()` is the server's message, e.g. `Missing required field: pixel_id`.
 */
class ApiException extends \RuntimeException implements TrackwayException
{
    /**
     * @param int $status HTTP status of the final answer.
     * @param string $error The short name, e.g. `Invalid request`, `Not found`, `Rate limit exceeded`.
     * @param string|null $field The field at fault, when one is.
     * @param int|null $retryAfter Seconds to wait, on a 429.
     * @param array<string, mixed>|null $body The whole error body as parsed.
     */
    public function __construct(
        public readonly int $status,
        public readonly string $error,
        string $message,
        public readonly ?string $field = null,
        public readonly ?int $retryAfter = null,
        public readonly ?array $body = null,
    ) {
        parent::__construct($message, $status);
    }

    /** Builds the exception from an answer's status and parsed JSON body (null when not JSON). */
    public static function fromResponse(int $status, mixed $body): self
    {
        $body = is_array($body) ? $body : null;
        return new self(
            $status,
            is_string($body['error'] ?? null) ? $body['error'] : "HTTP $status",
            is_string($body['message'] ?? null) ? $body['message'] : "HTTP $status",
            is_string($body['field'] ?? null) ? $body['field'] : null,
            is_int($body['retry_after'] ?? null) ? $body['retry_after'] : null,
            $body,
        );
    }
}
