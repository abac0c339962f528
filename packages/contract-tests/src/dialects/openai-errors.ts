import type { ScenarioError } from '../fake-provider/scenario.js'
import { randomId } from './dialect-helpers.js'
import type { EncodedHttpError } from './wire-dialect.js'

/** One OpenAI error as the API sends it: HTTP status and the fields of the body's `error` object. */
interface OpenAIError {
  status: number
  type: string
  code: string | null
  message: string
  param?: string
}

/** Errors both OpenAI APIs (Chat Completions and Responses) send alike. */
const SHARED: Omit<
  Record<ScenarioError['kind'], OpenAIError>,
  'invalid_request' | 'context_length' | 'server'
> = {
  rate_limit: {
    status: 429,
    type: 'tokens',
    code: 'rate_limit_exceeded',
    message:
      'Rate limit reached for gpt-5.4-mini in organization org-fake on tokens per min (TPM): Limit 200000, Used 195869, Requested 4412. Please try again in 84ms.',
  },
  overloaded: {
    status: 503,
    type: 'server_error',
    code: null,
    message: 'The server is overloaded or not ready yet.',
  },
  authentication: {
    status: 401,
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message:
      'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
  },
  permission: {
    status: 403,
    type: 'invalid_request_error',
    code: 'unsupported_country_region_territory',
    message: 'Country, region, or territory not supported',
  },
  not_found: {
    status: 404,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: 'The model `gpt-unknown` does not exist or you do not have access to it.',
  },
  unknown_resume: {
    status: 400,
    type: 'invalid_request_error',
    code: 'previous_response_not_found',
    param: 'previous_response_id',
    message: "Previous response with id 'resp_unknown' not found.",
  },
}

/** Chat Completions' own wording of the errors that differ between the two APIs. */
const CHAT: Record<ScenarioError['kind'], OpenAIError> = {
  ...SHARED,
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    code: 'unsupported_parameter',
    param: 'max_tokens',
    message:
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
  },
  context_length: {
    status: 400,
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    param: 'messages',
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
  },
  server: {
    status: 500,
    type: 'server_error',
    code: null,
    message: 'The server had an error while processing your request. Sorry about that!',
  },
}

/** The Responses API's own wording of the errors that differ between the two APIs. */
const RESPONSES: Record<ScenarioError['kind'], OpenAIError> = {
  ...SHARED,
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    code: 'unsupported_parameter',
    param: 'max_tokens',
    message: "Unsupported parameter: 'max_tokens' is not supported with this model.",
  },
  context_length: {
    status: 400,
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    param: 'input',
    message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
  },
  server: {
    status: 500,
    type: 'server_error',
    code: 'server_error',
    message: 'The server had an error while processing your request. Sorry about that!',
  },
}

/** The `error` object `api` sends for a scenario error: `{ message, type, param, code }`. */
export function openAIErrorBody(
  api: 'chat' | 'responses',
  error: ScenarioError,
): { message: string; type: string; param: string | null; code: string | null } {
  const known = (api === 'chat' ? CHAT : RESPONSES)[error.kind]
  return {
    message: error.message ?? known.message,
    type: known.type,
    param: known.param ?? null,
    code: known.code,
  }
}

/** The HTTP error response of `api` for a scenario error: `{ error: { message, type, param, code } }`. */
export function encodeOpenAIError(api: 'chat' | 'responses', error: ScenarioError): EncodedHttpError {
  const known = (api === 'chat' ? CHAT : RESPONSES)[error.kind]
  const requestId = randomId('req_', 12, api === 'chat' ? 'base64url' : 'hex')
  return {
    status: error.status ?? known.status,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...error.headers },
    body: JSON.stringify({ error: openAIErrorBody(api, error) }),
  }
}
