<?php

declare(strict_types=1);

// The OCP and Mail stand-ins, the app's classes (OCA\Tamebi\ → lib/, on
// demand) and what the tests share (OCA\Tamebi\Tests\Unit\ → tests/Unit/,
// on demand, so no test requires another's file), then the test doubles
// (some extend the app's classes).

require_once __DIR__ . '/stubs/ocp.php';
require_once __DIR__ . '/stubs/mail.php';

spl_autoload_register(static function (string $class): void {
	$roots = ['OCA\\Tamebi\\Tests\\Unit\\' => __DIR__ . '/Unit/', 'OCA\\Tamebi\\' => dirname(__DIR__) . '/lib/'];
	foreach ($roots as $prefix => $dir) {
		if (str_starts_with($class, $prefix)) {
			$file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
			if (is_file($file)) {
				require_once $file;
			}
			return;
		}
	}
});

foreach (glob(__DIR__ . '/Doubles/*.php') as $doubles) {
	require_once $doubles;
}
