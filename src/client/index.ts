/**
 * The Vehicle Data API's clients, made from the contract the server serves: the Effect client
 * (`VehicleDataClient`) and the Promise client (`makePromiseClient`), with their one error.
 */
export { type Client, type ClientOptions, type EndpointMethod, type Endpoints, make, makeWith, VehicleDataClient } from "./Client.js"
export { type ClientSideCode, VehicleDataApiError, type VehicleDataErrorCode } from "./Errors.js"
export { DEFAULT_DEADLINE, type FinalOperation, type WaitOptions } from "./Operations.js"
export { type CallOptions, makePromiseClient, type PromiseClient, type PromiseClientOptions, promised, type Promised } from "./PromiseClient.js"
export { DEFAULT_RETRY, retrySchedule, type RetryOptions } from "./Retry.js"
