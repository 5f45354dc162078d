import { Readable } from "node:stream";
import multipart, { type MultipartFile } from "@fastify/multipart";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { IdParams, UploadedFileSchema } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { requireRole } from "../auth/require-role.js";
import { AppError } from "../errors/app-error.js";
import { notModifiedSchema } from "../http/conditional-get.js";
import {
  fileEtag,
  fileResponseHeaders,
  INLINE_IMAGE_TYPES,
  matchesIfNoneMatch,
} from "../http/file-response-headers.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { readRoomFile } from "./read-room-file.js";
import { roomForMember } from "./room-access.js";
import { uploadFile } from "./upload-file.js";

const FILE_FIELD = "file";

const fileParams = IdParams("roomId", "fileId");

/** The bytes, as OpenAPI documents them: inline images under their type, anything else octet-stream. */
const fileBytes = { type: "string", format: "binary" } as const;
const fileAnswer = {
  description:
    "The file's bytes. PNG, JPEG, GIF and WebP images: their type, Content-Disposition inline; anything else: application/octet-stream, Content-Disposition attachment. Always X-Content-Type-Options: nosniff, a sandbox Content-Security-Policy and an ETag (the SHA-256).",
  content: Object.fromEntries(
    ["application/octet-stream", ...INLINE_IMAGE_TYPES].map((type) => [
      type,
      { schema: fileBytes },
    ]),
  ),
};

/** File uploads into a room (scanned by the antivirus engine when there is one) and downloads. */
export const filesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // Registered here, so multipart parsing exists only on this route family. Over-limit files are
  // cut and marked `truncated` (answered 413 by uploadFile) rather than failing mid-stream.
  await app.register(multipart, {
    throwFileSizeLimit: false,
    limits: {
      fileSize: ctx.config.maxUploadBytes,
      files: 1,
      fields: 10,
      fieldSize: 64 * 1024,
      parts: 20,
      headerPairs: 100,
    },
  });
  const anyUser = requireRole(ctx);

  app.post(
    "/api/rooms/:roomId/files",
    {
      onRequest: anyUser,
      attachValidation: true,
      schema: {
        tags: ["files"],
        security: [{ bearer: [] }],
        summary:
          "Upload a file into a room (fires FILE_UPLOADED, or FILE_INFECTION_DETECTED and 422)",
        description: `multipart/form-data with one file in the field \`${FILE_FIELD}\`; at most PARLEY_MAX_UPLOAD_BYTES (default 25 MiB).`,
        consumes: ["multipart/form-data"],
        params: IdParams("roomId"),
        // Documents the form for OpenAPI. The parts are read as a stream, so there is no parsed
        // body for it to validate: the handler ignores body validation (attachValidation).
        body: {
          content: {
            "multipart/form-data": {
              schema: {
                type: "object",
                properties: {
                  [FILE_FIELD]: { type: "string", contentMediaType: "application/octet-stream" },
                },
                required: [FILE_FIELD],
              },
            },
          },
        },
        response: {
          201: UploadedFileSchema,
          400: problemSchema,
          404: problemSchema,
          413: problemSchema,
          422: problemSchema,
          503: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      if (request.validationError && request.validationError.validationContext !== "body")
        throw request.validationError;
      const roomId = request.params.roomId;
      await roomForMember(ctx.db, roomId, request.principal);
      if (!request.isMultipart()) {
        throw new AppError(
          "file_required",
          `send multipart/form-data with the file in a field named ${FILE_FIELD}`,
        );
      }
      let part: MultipartFile | undefined;
      try {
        part = await request.file();
      } catch (error) {
        throw new AppError(
          "file_required",
          `the multipart body could not be read: ${(error as Error).message}`,
        );
      }
      if (!part || part.fieldname !== FILE_FIELD) {
        part?.file.resume();
        throw new AppError(
          "file_required",
          `send the file in a multipart field named ${FILE_FIELD}`,
        );
      }
      const file = await uploadFile(ctx, request.principal, roomId, {
        fileName: part.filename,
        fileType: part.mimetype,
        stream: part.file,
      });
      return reply.code(201).send(file);
    },
  );

  app.get(
    "/api/rooms/:roomId/files/:fileId",
    {
      onRequest: anyUser,
      schema: {
        tags: ["files"],
        security: [{ bearer: [] }],
        summary: "Download a file of a room (members; served with headers that keep it inert)",
        description:
          "A file carried by a visible message, or one you uploaded that no message carries yet. A file of a message " +
          "held for review (QUARANTINED or REJECTED), of a deleted message, or of another room answers 404 file_not_found. " +
          "If-None-Match with the ETag answers 304.",
        params: fileParams,
        response: {
          200: fileAnswer,
          304: notModifiedSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const { roomId, fileId } = request.params;
      const file = await readRoomFile(ctx, request.principal, roomId, fileId);
      const headers = fileResponseHeaders(file);
      if (matchesIfNoneMatch(request.headers["if-none-match"], fileEtag(file))) {
        const { "content-length": _length, "content-type": _type, ...kept } = headers;
        return reply.code(304).headers(kept).send();
      }
      // HEAD (Fastify's, from this GET): the headers without fetching the bytes. An empty stream,
      // because Fastify's HEAD handling answers Content-Length: 0 for no body at all.
      if (request.method === "HEAD")
        return reply.code(200).headers(headers).send(Readable.from([]));
      const body = await file.open();
      return reply.code(200).headers(headers).send(body);
    },
  );
};
