<?php

declare(strict_types=1);

namespace OCA\Tamebi\Db;

use OCP\DB\QueryBuilder\IQueryBuilder;
use OCP\IDBConnection;

/**
 * MCP App documents kept for re-serving: the HTML and the policy built for
 * it, for one user, ten minutes (`tamebi_ui`, see lib/Migration). The same
 * table technique as PreviewStore, so a document posted on one PHP worker
 * is served by another.
 */
class UiStore {
	public const TABLE = 'tamebi_ui';
	public const LIFETIME_SECONDS = 600;

	public function __construct(
		private IDBConnection $db,
	) {
	}

	public function insert(string $uid, string $html, string $policy, int $now): string {
		$this->db->executeStatement(
			'DELETE FROM `*PREFIX*tamebi_ui` WHERE `expires_at` < ?',
			[$now],
			[IQueryBuilder::PARAM_INT],
		);
		$id = bin2hex(random_bytes(16));
		$this->db->executeStatement(
			'INSERT INTO `*PREFIX*tamebi_ui` (`id`, `user_id`, `html`, `policy`, `expires_at`) VALUES (?, ?, ?, ?, ?)',
			[$id, $uid, $html, $policy, $now + self::LIFETIME_SECONDS],
			[IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_INT],
		);
		return $id;
	}

	/** @return array{html: string, policy: string}|null the user's unexpired document */
	public function find(string $uid, string $id, int $now): ?array {
		$result = $this->db->executeQuery(
			'SELECT `html`, `policy` FROM `*PREFIX*tamebi_ui` WHERE `id` = ? AND `user_id` = ? AND `expires_at` >= ?',
			[$id, $uid, $now],
			[IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_STR, IQueryBuilder::PARAM_INT],
		);
		$row = $result->fetch();
		$result->closeCursor();
		return is_array($row) ? ['html' => (string)$row['html'], 'policy' => (string)$row['policy']] : null;
	}
}
