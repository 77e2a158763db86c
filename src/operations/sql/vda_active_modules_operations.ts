/**
 * A batch of module queries that may reuse an active operation, by reuse key (account,
 * environment, API version, plate and modules): the active operations, each with its module rows.
 *
 * As a plain statement PostgreSQL planned it on every call: about 0.26 ms of planning for 0.2 ms
 * of execution. A PL/pgSQL function keeps its statement's plan for the session, and with a
 * generic plan from the first call it plans it once.
 */
import { ACTIVE_SQL, returned, selected } from "./operationRow.js"
import { KEYED_LOOKUP_PLANS } from "../../platform/db/DatabaseFunctions.js"

export default `create or replace function vda_active_modules_operations(
  p_account text[], p_environment text[], p_api_version text[], p_plate text[], p_modules_key text[])
returns table (${returned})
language plpgsql stable
${KEYED_LOOKUP_PLANS} as $fn$
begin
  return query select ${selected} from operations o
    where o.kind = 'modules' and o.status in ${ACTIVE_SQL}
      and (o.account_id, o.environment, o.api_version, o.plate, o.modules_key) in (
        select * from unnest(p_account, p_environment, p_api_version, p_plate, p_modules_key));
end $fn$
`
