<?php

declare(strict_types=1);

// PSR-4 autoloading of Trackway\ from src/ for use without Composer
// (`require 'path/to/clients/php/autoload.php';`). With Composer, vendor/autoload.php does this.
spl_autoload_register(static function (string $class): void {
    if (!str_starts_with($class, 'Trackway\\')) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen('Trackway\\'))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
