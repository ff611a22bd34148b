// gzip through Intel's ISA-L (igzip): the same format as zlib's gzip, at level 1 about a quarter
// of zlib's CPU for a page of listings (bench/results/2026-11-30-igzip.txt). One call compresses
// a whole buffer on the calling thread; src/http/gzip.ts falls back to zlib when this module was
// not built (no libisal-dev) or answers null.
#define NAPI_VERSION 8
#include <node_api.h>
#include <isa-l/igzip_lib.h>
#include <stdint.h>
#include <stdlib.h>

// One stream, level buffer and output buffer per Node.js environment (the main thread and each
// worker has its own), reused by every call: allocating them costs more than a small page's work.
typedef struct {
  struct isal_zstream stream;
  uint8_t *level_buf;
  uint8_t *out;
  size_t out_size;
} engine_t;

// What is kept between calls; a larger buffer (a rare large answer) is freed after its call.
#define KEPT_OUT_BYTES (1024 * 1024)
// Inputs above this go to zlib: ISA-L's counters are 32-bit.
#define MAX_INPUT_BYTES (1024 * 1024 * 1024)

static void release(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  engine_t *engine = data;
  free(engine->level_buf);
  free(engine->out);
  free(engine);
}

static engine_t *engine_of(napi_env env) {
  engine_t *engine = NULL;
  if (napi_get_instance_data(env, (void **)&engine) == napi_ok && engine != NULL) return engine;
  engine = calloc(1, sizeof(engine_t));
  if (engine == NULL) return NULL;
  engine->level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
  if (engine->level_buf == NULL || napi_set_instance_data(env, engine, release, NULL) != napi_ok) {
    free(engine->level_buf);
    free(engine);
    return NULL;
  }
  return engine;
}

// Stored blocks bound what deflate may add to incompressible input: 5 bytes a 64 KiB block, plus
// the gzip header and trailer; the margin is generous and a call that still runs out says so.
static size_t bound(size_t n) { return n + (n >> 10) + 1024; }

// gzip(input: Uint8Array): Buffer | null. Null when ISA-L could not finish (the caller uses zlib);
// a TypeError when input is not a Uint8Array.
static napi_value gzip(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_value result = NULL;
  napi_get_null(env, &result);
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return result;

  bool is_typed = false;
  napi_typedarray_type type;
  size_t length = 0;
  void *data = NULL;
  if (argc < 1 || napi_is_typedarray(env, argv[0], &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL) != napi_ok ||
      type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "gzip takes a Uint8Array (a Buffer)");
    return NULL;
  }
  if (length > MAX_INPUT_BYTES) return result;

  engine_t *engine = engine_of(env);
  if (engine == NULL) return result;
  size_t needed = bound(length);
  if (engine->out_size < needed) {
    uint8_t *out = realloc(engine->out, needed);
    if (out == NULL) return result;
    engine->out = out;
    engine->out_size = needed;
  }

  struct isal_zstream *stream = &engine->stream;
  isal_deflate_init(stream);
  stream->gzip_flag = IGZIP_GZIP;
  stream->level = 1;
  stream->level_buf = engine->level_buf;
  stream->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
  stream->end_of_stream = 1;
  stream->flush = NO_FLUSH;
  stream->next_in = data;
  stream->avail_in = (uint32_t)length;
  stream->next_out = engine->out;
  stream->avail_out = (uint32_t)engine->out_size;
  // No JavaScript runs between here and the return (napi_create_buffer_copy defers finalizers),
  // so nothing can re-enter and reuse engine->out while it is read.
  int status = isal_deflate(stream);
  if (status == COMP_OK && stream->avail_in == 0 && stream->internal_state.state == ZSTATE_END) {
    void *copy = NULL;
    napi_create_buffer_copy(env, stream->total_out, engine->out, &copy, &result);
  }
  if (engine->out_size > KEPT_OUT_BYTES) {
    free(engine->out);
    engine->out = NULL;
    engine->out_size = 0;
  }
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "gzip", NAPI_AUTO_LENGTH, gzip, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "gzip", fn) != napi_ok) return NULL;
  return exports;
}
