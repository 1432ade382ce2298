-- A small Nsight Systems-like export for tests, built with
--   sqlite3 synthetic.sqlite < synthetic.sql
-- Page size 512 and a 3000-byte kernel name exercise overflow pages and a
-- deeper B-tree; the rows exercise what real exports do rarely: a start
-- stored as text, a NULL end, an unterminated NVTX range, a mark, text by
-- StringIds id, a RUNTIME table without correlationId (launches cannot be
-- linked: a warning), three repeated top-level NVTX ranges (steps) and a
-- kernel of a second process.
PRAGMA page_size = 512;
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'gemm_kernel'), (3, 'gemm'), (4, 'step');
INSERT INTO StringIds VALUES (5, 'k_' || replace(hex(zeroblob(1500)), '00', 'ab'));
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "end" INTEGER NOT NULL, eventClass INTEGER, globalTid INTEGER, nameId INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, registersPerThread INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, totalMemory INTEGER, smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER, memoryBandwidth INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'Synthetic GPU', 80000000000, 100, 9, 0, 3000000000000);
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 299)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT 1000 + i * 1000, 1000 + i * 1000 + 300, 1, 281474993487872 + 77, 1 FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 299)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT 1500 + i * 1000, 1500 + i * 1000 + 400 + i, 0, 1, 7, i + 1, 281474993487872, CASE WHEN i % 10 = 0 THEN 5 ELSE 2 END, 3, 32, 64, 1, 1, 256, 1, 1, 1024, 0 FROM n;
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('soon', 2000, 0, 1, 7, 999, 281474993487872, 2, 3, 32, 1, 1, 1, 1, 1, 1, 0, 0);
INSERT INTO NVTX_EVENTS VALUES (900, 100900, 59, 'step', 281474993487872 + 77, NULL, 0);
INSERT INTO NVTX_EVENTS VALUES (100900, 200900, 59, NULL, 281474993487872 + 77, 4, 0);
INSERT INTO NVTX_EVENTS VALUES (200900, 300900, 59, 'step', 281474993487872 + 77, NULL, 0);
INSERT INTO NVTX_EVENTS VALUES (1000, 2000, 59, 'inner', 281474993487872 + 77, NULL, 0);
INSERT INTO NVTX_EVENTS VALUES (5000, NULL, 60, 'never ended', 281474993487872 + 77, NULL, 0);
INSERT INTO NVTX_EVENTS VALUES (6000, NULL, 34, 'a mark', 281474993487872 + 77, NULL, 0);
-- A kernel of a second process (pid 2), with no launch call: a warning
-- says the processes are read as one trace.
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (400000, 400100, 0, 1, 7, 5, 281474993487872 + 16777216, 2, 3, 32, 64, 1, 1, 256, 1, 1, 1024, 0);
-- A kernel whose name ids StringIds lacks: named by its id, with a warning.
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (500000, 500050, 0, 1, 7, 6, 281474993487872, 99, 98, 32, 64, 1, 1, 256, 1, 1, 1024, 0);
