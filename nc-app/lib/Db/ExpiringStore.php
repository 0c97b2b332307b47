<?php

declare(strict_types=1);

namespace OCA\Tamebi\Db;

use OCP\DB\QueryBuilder\IQueryBuilder;
use OCP\IDBConnection;

/**
 * The table technique PreviewStore and UiStore share: rows of one user,
 * each under a fresh random id, read back only by that id, for that user,
 * until it expires. A table (see lib/Migration) because a row written on
 * one PHP worker must be read on another and survive cache evictions; the
 * expired rows are deleted on each insert, so no background job is needed.
 * Each table has `id`, `user_id`, its own columns, then `expires_at`.
 */
abstract class ExpiringStore {
	/** The table, without Nextcloud's prefix. */
	protected const TABLE = '';
	/** How long a row is found after its insert. */
	protected const LIFETIME_SECONDS = 0;

	public function __construct(
		protected IDBConnection $db,
	) {
	}

	/**
	 * Delete the expired rows, then insert one for `$uid` that expires
	 * LIFETIME_SECONDS from `$now`.
	 *
	 * @param array<string, array{0: mixed, 1: int}> $columns the table's own columns in order: name => [value, IQueryBuilder::PARAM_*]
	 * @return string the new row's id
	 */
	protected function insertRow(string $uid, array $columns, int $now): string {
		$this->db->executeStatement(
			'DELETE FROM `*PREFIX*' . static::TABLE . '` WHERE `expires_at` < ?',
			[$now],
			[IQueryBuilder::PARAM_INT],
		);
		$id = bin2hex(random_bytes(16));
		$names = array_merge(['id', 'user_id'], array_keys($columns), ['expires_at']);
		$this->db->executeStatement(
			'INSERT INTO `*PREFIX*' . static::TABLE . '` (`' . implode('`, `', $names) . '`) VALUES (' . implode(', ', array_fill(0, count($names), '?')) . ')',
			array_merge([$id, $uid], array_column($columns, 0), [$now + static::LIFETIME_SECONDS]),
			array_merge([IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR], array_column($columns, 1), [IQueryBuilder::PARAM_INT]),
		);
		return $id;
	}

	/**
	 * The named columns of `$uid`'s row `$id`; null when it is not theirs,
	 * does not exist or has expired.
	 *
	 * @param list<string> $columns
	 * @return array<string, mixed>|null
	 */
	protected function findRow(string $uid, string $id, array $columns, int $now): ?array {
		$result = $this->db->executeQuery(
			'SELECT `' . implode('`, `', $columns) . '` FROM `*PREFIX*' . static::TABLE . '` WHERE `id` = ? AND `user_id` = ? AND `expires_at` >= ?',
			[$id, $uid, $now],
			[IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_INT],
		);
		$row = $result->fetch();
		$result->closeCursor();
		return is_array($row) ? $row : null;
	}
}
