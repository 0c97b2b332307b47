<?php

declare(strict_types=1);

// The OCP and Mail stand-ins, the app's classes (OCA\Tamebi\ → lib/, on
// demand), then the test doubles (some extend the app's classes).

require_once __DIR__ . '/stubs/ocp.php';
require_once __DIR__ . '/stubs/mail.php';

spl_autoload_register(static function (string $class): void {
	$prefix = 'OCA\\Tamebi\\';
	if (!str_starts_with($class, $prefix)) {
		return;
	}
	$file = dirname(__DIR__) . '/lib/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
	if (is_file($file)) {
		require_once $file;
	}
});

foreach (glob(__DIR__ . '/Doubles/*.php') as $doubles) {
	require_once $doubles;
}
