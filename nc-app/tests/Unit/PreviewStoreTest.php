<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Db\PreviewStore;
use OCA\Tamebi\Tests\Doubles\SqliteConnection;
use PHPUnit\Framework\TestCase;

/** The previews table, created by the app's migration, on SQLite. */
final class PreviewStoreTest extends TestCase {
	private const PAYLOAD = ['from' => 'alice@example.com', 'to' => ['bob@example.com'], 'cc' => [], 'subject' => 'Hi', 'body' => 'Hello'];

	public function testOnlyOneOfTwoClaimsWins(): void {
		$store = new PreviewStore(new SqliteConnection());
		$id = $store->insert('alice', 1, self::PAYLOAD, 1000);
		self::assertTrue($store->transition('alice', $id, 'stored', 'sending'));
		self::assertFalse($store->transition('alice', $id, 'stored', 'saving'));
		self::assertFalse($store->transition('bob', $id, 'sending', 'sent'), 'another user cannot move it');
		self::assertSame('sending', $store->find('alice', $id, 1000)['state']);
	}

	public function testAPreviewLivesADayAndExpiredOnesAreDeleted(): void {
		$db = new SqliteConnection();
		$store = new PreviewStore($db);
		$old = $store->insert('alice', 1, self::PAYLOAD, 1000);
		self::assertSame(self::PAYLOAD, $store->find('alice', $old, 1000 + 86400)['payload']);
		self::assertNull($store->find('alice', $old, 1000 + 86401));
		$store->insert('alice', 1, self::PAYLOAD, 1000 + 86401);
		self::assertSame(1, (int)$db->pdo->query('SELECT COUNT(*) FROM oc_tamebi_previews')->fetchColumn());
	}
}
