<?php

declare(strict_types=1);

namespace Trackway\Exception;

/**
 * Webhook::verify() refused a delivery: answer it with 400 and do not act on it.
 * `$reason` says why, as one of the codes every Trackway client uses: `missing_signature`,
 * `invalid_timestamp`, `timestamp_out_of_tolerance`, `invalid_signature`, `invalid_payload`.
 */
class WebhookVerificationException extends \RuntimeException implements TrackwayException
{
    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct($message);
    }

    public function getReason(): string
    {
        return $this->reason;
    }
}
