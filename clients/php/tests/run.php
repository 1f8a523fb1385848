<?php

declare(strict_types=1);

/*
 * A PHPUnit-free runner: `php tests/run.php [name-filter]`. Loads every tests/*Test.php, each of
 * which registers cases with test(); runs them, prints one line per case, exits 1 if any failed.
 */

error_reporting(E_ALL);
set_error_handler(static function (int $no, string $text, string $file, int $line): bool {
    if ((error_reporting() & $no) === 0) {
        return false; // silenced with @
    }
    throw new ErrorException($text, 0, $no, $file, $line);
});
require __DIR__ . '/../autoload.php';
require __DIR__ . '/lib.php';

foreach (glob(__DIR__ . '/*Test.php') as $file) {
    require $file;
}

$filter = $argv[1] ?? '';
$failed = 0;
$ran = 0;
foreach (Trackway\Tests\registered() as [$name, $case]) {
    if ($filter !== '' && !str_contains($name, $filter)) {
        continue;
    }
    $ran++;
    $started = microtime(true);
    try {
        $case();
        printf("ok   %s (%.2f s)\n", $name, microtime(true) - $started);
    } catch (Throwable $error) {
        $failed++;
        printf("FAIL %s\n     %s: %s\n     at %s:%d\n", $name, get_class($error), $error->getMessage(), $error->getFile(), $error->getLine());
    } finally {
        Trackway\Tests\stopServers();
    }
}
printf("\n%d tests, %d failed\n", $ran, $failed);
exit($failed === 0 && $ran > 0 ? 0 : 1);
