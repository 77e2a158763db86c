/**
 * A batch of polls: operations by id, each with its module rows.
 *
 * As a plain statement PostgreSQL planned it on every call: about 0.26 ms of planning for 0.2 ms
 * of execution. A PL/pgSQL function keeps its statement's plan for the session, and with a
 * generic plan from the first call it plans it once.
 */
import { returned, selected } from "./operationRow.js"
import { KEYED_LOOKUP_PLANS } from "../../platform/db/DatabaseFunctions.js"

export default `create or replace function vda_operations_by_id(p_ids text[])
returns table (${returned})
language plpgsql stable
${KEYED_LOOKUP_PLANS} as $fn$
begin
  return query select ${selected} from operations o where o.id = any(p_ids);
end $fn$
`
