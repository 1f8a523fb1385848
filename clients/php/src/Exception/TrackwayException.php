<?php

declare(strict_types=1);

namespace Trackway\Exception;

/** Every exception this client throws implements this, so one catch covers them all. */
interface TrackwayException extends \Throwable
{
}
