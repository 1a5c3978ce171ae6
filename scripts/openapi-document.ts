/**
 * The OpenAPI document as committed in docs/openapi.json and linted by `npm run lint:openapi`:
 * generated exactly as GET /api/v1/openapi.json serves it, for the documented example origin so
 * the text does not depend on the environment. test/contracts/openapi-document.test.ts keeps the
 * committed file equal to it.
 */
import { buildOpenApiDocument } from '../src/http/public/api-v1/openapi/document.ts';

export const EXAMPLE_BASE_URL = 'https://calls.example.com';

export const openApiDocumentText = (): string =>
  `${JSON.stringify(buildOpenApiDocument({ publicBaseUrl: EXAMPLE_BASE_URL }), null, 2)}\n`;
