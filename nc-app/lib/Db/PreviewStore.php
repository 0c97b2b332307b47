<?php

declare(strict_types=1);

namespace OCA\Tamebi\Db;

use OCP\DB\QueryBuilder\IQueryBuilder;
use OCP\IDBConnection;

/**
 * Mail previews waiting for the user's click, in the app's own table
 * (`tamebi_previews`, see lib/Migration). A table because "sent once, then
 * 409" must survive requests, workers and cache evictions, and a
 * conditional UPDATE is the one atomic claim every database Nextcloud runs
 * on offers. Rows live a day; expired rows are deleted on each insert.
 */
class PreviewStore {
	public const TABLE = 'tamebi_previews';
	public const LIFETIME_SECONDS = 86400;

	public const STATE_STORED = 'stored';
	public const STATE_SENDING = 'sending';
	public const STATE_SAVING = 'saving';
	public const STATE_SENT = 'sent';
	public const STATE_SAVED = 'saved';
	/** The SMTP server's answer left it unclear whether the mail went out. */
	public const STATE_UNCERTAIN = 'uncertain';

	public function __construct(
		private IDBConnection $db,
	) {
	}

	/** @param array<string, mixed> $payload */
	public function insert(string $uid, int $accountId, array $payload, int $now): string {
		$this->db->executeStatement(
			'DELETE FROM `*PREFIX*tamebi_previews` WHERE `expires_at` < ?',
			[$now],
			[IQueryBuilder::PARAM_INT],
		);
		$id = bin2hex(random_bytes(16));
		$this->db->executeStatement(
			'INSERT INTO `*PREFIX*tamebi_previews` (`id`, `user_id`, `account_id`, `payload`, `state`, `created_at`, `expires_at`) VALUES (?, ?, ?, ?, ?, ?, ?)',
			[$id, $uid, $accountId, json_encode($payload, JSON_THROW_ON_ERROR), self::STATE_STORED, $now, $now + self::LIFETIME_SECONDS],
			[IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_INT, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_INT, IQueryBuilder::PARAM_INT],
		);
		return $id;
	}

	/**
	 * The user's preview, whatever its state; null when it is not theirs,
	 * does not exist or has expired.
	 *
	 * @return array{id: string, accountId: int, payload: array<string, mixed>, state: string}|null
	 */
	public function find(string $uid, string $id, int $now): ?array {
		$result = $this->db->executeQuery(
			'SELECT `id`, `account_id`, `payload`, `state` FROM `*PREFIX*tamebi_previews` WHERE `id` = ? AND `user_id` = ? AND `expires_at` >= ?',
			[$id, $uid, $now],
			[IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_INT],
		);
		$row = $result->fetch();
		$result->closeCursor();
		if (!is_array($row)) {
			return null;
		}
		return [
			'id' => (string)$row['id'],
			'accountId' => (int)$row['account_id'],
			'payload' => json_decode((string)$row['payload'], true, 8, JSON_THROW_ON_ERROR),
			'state' => (string)$row['state'],
		];
	}

	/**
	 * Move a preview from one state to another, only if it is in `$from`
	 * now. True for exactly one of two concurrent callers.
	 */
	public function transition(string $uid, string $id, string $from, string $to): bool {
		return $this->db->executeStatement(
			'UPDATE `*PREFIX*tamebi_previews` SET `state` = ? WHERE `id` = ? AND `user_id` = ? AND `state` = ?',
			[$to, $id, $uid, $from],
			[IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR],
		) === 1;
	}
}
