/**
 * The database of every process (the API, the worker, `vda`): migrated, then every feature's
 * functions installed from their sources, in this order (a function before the SQL-language
 * functions that call it, since PostgreSQL checks those bodies when they are created).
 */
import vdaAccountStatus from "./accounts/sql/vda_account_status.js"
import vdaKeyAccount from "./accounts/sql/vda_key_account.sql"
import vdaAdmitCharge from "./metering/sql/vda_admit_charge.js"
import vdaAdmitChargeLockFirst from "./metering/sql/vda_admit_charge_lock_first.js"
import vdaAdmitChargeInOrder from "./metering/sql/vda_admit_charge_in_order.js"
import vdaAdmitChargeShared from "./metering/sql/vda_admit_charge_shared.js"
import vdaAdmitKeys from "./metering/sql/vda_admit_keys.js"
import vdaConsume from "./metering/sql/vda_consume.js"
import vdaActiveModulesOperations from "./operations/sql/vda_active_modules_operations.js"
import vdaCreateOperation from "./operations/sql/vda_create_operation.js"
import vdaOperationsById from "./operations/sql/vda_operations_by_id.js"
import { databaseFunction } from "./platform/db/DatabaseFunctions.js"
import { type EmbeddedRole, makeDatabaseLive, makeMigratorLive } from "./platform/db/Database.js"

export const databaseFunctions = [
  vdaKeyAccount,
  vdaConsume,
  vdaAdmitChargeInOrder,
  vdaAdmitCharge,
  vdaAdmitChargeLockFirst,
  vdaAdmitChargeShared,
  vdaAdmitKeys,
  vdaAccountStatus,
  vdaOperationsById,
  vdaActiveModulesOperations,
  vdaCreateOperation
].map(databaseFunction)

/** SqlClient on the migrated database, its functions installed. */
export const DatabaseLive = (role: EmbeddedRole) => makeDatabaseLive(role, databaseFunctions)

/** The migrations and functions alone, on a given SqlClient (tests' databases). */
export const MigratorLive = makeMigratorLive(databaseFunctions)
