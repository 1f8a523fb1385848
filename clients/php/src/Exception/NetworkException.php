<?php

declare(strict_types=1);

namespace Trackway\Exception;

/** The request got no complete answer (connection refused or reset, timeout), after any retries. */
class NetworkException extends \RuntimeException implements TrackwayException
{
}
