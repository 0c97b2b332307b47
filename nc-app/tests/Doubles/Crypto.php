<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Doubles;

use OCP\Security\ICrypto;

/**
 * ICrypto as a test can check it: the ciphertext never contains the
 * plaintext, and one that was not made here (or was altered) fails to
 * decrypt with an exception, as Nextcloud's does when its HMAC does not
 * match (another instance secret, a truncated value).
 */
final class FakeCrypto implements ICrypto {
	public const PREFIX = 'fake-crypto|';

	public function __construct(
		private string $key = 'instance-secret',
	) {
	}

	public function calculateHMAC(string $message, string $password = ''): string {
		return hash_hmac('sha512', $message, $password !== '' ? $password : $this->key, true);
	}

	public function encrypt(string $plaintext, string $password = ''): string {
		$ciphertext = bin2hex(strrev($plaintext) ^ str_repeat("\x5a", strlen($plaintext)));
		return self::PREFIX . $ciphertext . '|' . bin2hex($this->calculateHMAC($ciphertext, $password));
	}

	public function decrypt(string $authenticatedCiphertext, string $password = ''): string {
		$parts = explode('|', $authenticatedCiphertext);
		if (count($parts) !== 3 || $parts[0] . '|' !== self::PREFIX || !hash_equals(bin2hex($this->calculateHMAC($parts[1], $password)), $parts[2])) {
			throw new \Exception('HMAC does not match.');
		}
		$xored = hex2bin($parts[1]);
		return strrev($xored ^ str_repeat("\x5a", strlen($xored)));
	}
}
