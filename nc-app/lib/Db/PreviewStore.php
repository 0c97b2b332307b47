<?php

declare(strict_types=1);

namespace OCA\Tamebi\Db;

use OCP\DB\QueryBuilder\IQueryBuilder;

/**
 * Mail previews waiting for the user's click, in the app's own table
 * (`tamebi_previews`, see lib/Migration). A table because "sent once, then
 * 409" must survive requests, workers and cache evictions, and a
 * conditional UPDATE is the one atomic claim every database Nextcloud runs
 * on offers. Rows live a day (ExpiringStore deletes expired rows on each
 * insert).
 */
class PreviewStore extends ExpiringStore {
	public const TABLE = 'tamebi_previews';
	public const LIFETIME_SECONDS = 86400;

	public const STATE_STORED = 'stored';
	public const STATE_SENDING = 'sending';
	public const STATE_SAVING = 'saving';
	public const STATE_SENT = 'sent';
	public const STATE_SAVED = 'saved';
	/** The SMTP server's answer left it unclear whether the mail went out. */
	public const STATE_UNCERTAIN = 'uncertain';

	/** @param array<string, mixed> $payload */
	public function insert(string $uid, int $accountId, array $payload, int $now): string {
		return $this->insertRow($uid, [
			'account_id' => [$accountId, IQueryBuilder::PARAM_INT],
			'payload' => [json_encode($payload, JSON_THROW_ON_ERROR), IQueryBuilder::PARAM_STR],
			'state' => [self::STATE_STORED, IQueryBuilder::PARAM_STR],
			'created_at' => [$now, IQueryBuilder::PARAM_INT],
		], $now);
	}

	/**
	 * The user's preview, whatever its state; null when it is not theirs,
	 * does not exist or has expired.
	 *
	 * @return array{id: string, accountId: int, payload: array<string, mixed>, state: string}|null
	 */
	public function find(string $uid, string $id, int $now): ?array {
		$row = $this->findRow($uid, $id, ['id', 'account_id', 'payload', 'state'], $now);
		if ($row === null) {
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
