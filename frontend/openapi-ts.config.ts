import { defineConfig } from '@hey-api/openapi-ts';

// `npm run client` regenerates src/client from the checked-in openapi.json.
// Refresh openapi.json from a running backend first with:
//   curl -s http://127.0.0.1:8010/api/v1/openapi.json -o openapi.json
export default defineConfig({
  input: process.env.OPENAPI_URL ?? './openapi.json',
  output: { path: 'src/client' },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
});
