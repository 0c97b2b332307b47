<?php

declare(strict_types=1);

namespace OCA\Tamebi\Migration;

use Closure;
use OCP\DB\ISchemaWrapper;
use OCP\DB\Types;
use OCP\Migration\IOutput;
use OCP\Migration\SimpleMigrationStep;

/**
 * The app's two tables: mail previews waiting for a click
 * (Db\PreviewStore) and MCP App documents kept for re-serving
 * (Db\UiStore). Nothing else is stored by the app.
 */
class Version1000Date20260801000000 extends SimpleMigrationStep {
	public function changeSchema(IOutput $output, Closure $schemaClosure, array $options): ?ISchemaWrapper {
		/** @var ISchemaWrapper $schema */
		$schema = $schemaClosure();

		self::expiringTable($schema, 'tamebi_previews', [
			'account_id' => [Types::BIGINT, []],
			'payload' => [Types::TEXT, []],
			'state' => [Types::STRING, ['length' => 16]],
			'created_at' => [Types::BIGINT, []],
		]);
		self::expiringTable($schema, 'tamebi_ui', [
			'html' => [Types::TEXT, []],
			'policy' => [Types::TEXT, []],
		]);

		return $schema;
	}

	/**
	 * One table of Db\ExpiringStore's shape, unless it exists: `id`,
	 * `user_id`, its own columns (all NOT NULL), `expires_at`, keyed by `id`
	 * and indexed on `expires_at` for the delete of expired rows.
	 *
	 * @param array<string, array{0: string, 1: array<string, mixed>}> $columns name => [type, options]
	 */
	private static function expiringTable(ISchemaWrapper $schema, string $name, array $columns): void {
		if ($schema->hasTable($name)) {
			return;
		}
		$table = $schema->createTable($name);
		$table->addColumn('id', Types::STRING, ['notnull' => true, 'length' => 32]);
		$table->addColumn('user_id', Types::STRING, ['notnull' => true, 'length' => 64]);
		foreach ($columns as $column => [$type, $columnOptions]) {
			$table->addColumn($column, $type, ['notnull' => true] + $columnOptions);
		}
		$table->addColumn('expires_at', Types::BIGINT, ['notnull' => true]);
		$table->setPrimaryKey(['id']);
		$table->addIndex(['expires_at'], $name . '_expires');
	}
}
