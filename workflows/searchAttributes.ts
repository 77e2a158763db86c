/**
 * The typed search attributes of `SEARCH_ATTRIBUTES`, and the memo and summary an operator reads
 * in the Temporal UI. Shared by the workflows (sandbox-safe) and the API's Temporal engine.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from "@temporalio/common"
import type { WorkflowLabels } from "./shared.js"

export const searchAttributeKeys = {
  accountId: defineSearchAttributeKey("VdaAccountId", SearchAttributeType.KEYWORD),
  environment: defineSearchAttributeKey("VdaEnvironment", SearchAttributeType.KEYWORD),
  kind: defineSearchAttributeKey("VdaKind", SearchAttributeType.KEYWORD),
  modules: defineSearchAttributeKey("VdaModules", SearchAttributeType.KEYWORD),
  plateHash: defineSearchAttributeKey("VdaPlateHash", SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey("VdaStatus", SearchAttributeType.KEYWORD)
}

/** The attributes a workflow starts with; empty values are left out. */
export const searchAttributesOf = (labels: WorkflowLabels): Array<SearchAttributePair> => {
  const pairs: Array<SearchAttributePair> = [
    { key: searchAttributeKeys.accountId, value: labels.accountId },
    { key: searchAttributeKeys.environment, value: labels.environment },
    { key: searchAttributeKeys.kind, value: labels.kind }
  ]
  if (labels.modules !== "") pairs.push({ key: searchAttributeKeys.modules, value: labels.modules })
  if (labels.plateHash !== "") pairs.push({ key: searchAttributeKeys.plateHash, value: labels.plateHash })
  return pairs
}

/** The memo and the one-line summary shown in the UI: the labels, never the plate. */
export const workflowMetadataOf = (labels: WorkflowLabels, subject: string) => ({
  memo: { subject, ...labels },
  staticSummary: [labels.kind, labels.modules, labels.environment, labels.accountId, subject].filter((s) => s !== "").join(" · ")
})
