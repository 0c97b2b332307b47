<?php

declare(strict_types=1);

namespace OCA\Tamebi\Db;

use OCP\DB\QueryBuilder\IQueryBuilder;

/**
 * MCP App documents kept for re-serving: the HTML and the policy built for
 * it, for one user, ten minutes (`tamebi_ui`, see lib/Migration). The same
 * table technique as PreviewStore (ExpiringStore), so a document posted on
 * one PHP worker is served by another.
 */
class UiStore extends ExpiringStore {
	public const TABLE = 'tamebi_ui';
	public const LIFETIME_SECONDS = 600;

	public function insert(string $uid, string $html, string $policy, int $now): string {
		return $this->insertRow($uid, [
			'html' => [$html, IQueryBuilder::PARAM_STR],
			'policy' => [$policy, IQueryBuilder::PARAM_STR],
		], $now);
	}

	/** @return array{html: string, policy: string}|null the user's unexpired document */
	public function find(string $uid, string $id, int $now): ?array {
		$row = $this->findRow($uid, $id, ['html', 'policy'], $now);
		return $row !== null ? ['html' => (string)$row['html'], 'policy' => (string)$row['policy']] : null;
	}
}
