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

		if (!$schema->hasTable('tamebi_previews')) {
			$table = $schema->createTable('tamebi_previews');
			$table->addColumn('id', Types::STRING, ['notnull' => true, 'length' => 32]);
			$table->addColumn('user_id', Types::STRING, ['notnull' => true, 'length' => 64]);
			$table->addColumn('account_id', Types::BIGINT, ['notnull' => true]);
			$table->addColumn('payload', Types::TEXT, ['notnull' => true]);
			$table->addColumn('state', Types::STRING, ['notnull' => true, 'length' => 16]);
			$table->addColumn('created_at', Types::BIGINT, ['notnull' => true]);
			$table->addColumn('expires_at', Types::BIGINT, ['notnull' => true]);
			$table->setPrimaryKey(['id']);
			$table->addIndex(['expires_at'], 'tamebi_previews_expires');
		}

		if (!$schema->hasTable('tamebi_ui')) {
			$table = $schema->createTable('tamebi_ui');
			$table->addColumn('id', Types::STRING, ['notnull' => true, 'length' => 32]);
			$table->addColumn('user_id', Types::STRING, ['notnull' => true, 'length' => 64]);
			$table->addColumn('html', Types::TEXT, ['notnull' => true]);
			$table->addColumn('policy', Types::TEXT, ['notnull' => true]);
			$table->addColumn('expires_at', Types::BIGINT, ['notnull' => true]);
			$table->setPrimaryKey(['id']);
			$table->addIndex(['expires_at'], 'tamebi_ui_expires');
		}

		return $schema;
	}
}
