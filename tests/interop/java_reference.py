"""Access to the Java reference implementation of Iceberg (Apache Iceberg 1.10.2) for interop tests.

Everything comes from PyPI: ``pyspark==3.5.9`` provides Spark (and Jackson 2.15), and
``snowpark-connect-deps-iceberg`` ships ``iceberg-spark-runtime-3.5_2.12-1.10.2.jar``. That runtime
jar was published without its shaded Jackson classes (``org.apache.iceberg.shaded.com.fasterxml
.jackson.*``), so anything that touches JSON fails with ``ClassNotFoundException``. We rebuild those
classes by renaming the packages inside PySpark's own Jackson jars (constant-pool UTF-8 entries
and ``META-INF/services`` files) and put the result on the class path as one extra jar.

Two ways in:

* :func:`reference_session` -- a local SparkSession with a Hadoop catalog ``ref``, for
  ``ref.system.bucket(N, col)`` and friends, and for writing reference tables;
* :class:`JavaOracle` -- a small Java program (``java/FrazilOracle.java``) run as a subprocess
  that answers transform / binary codec / JSON codec requests line by line through the public
  Iceberg Java API. One JVM serves a whole test module.

Generated artifacts (the relocated Jackson jar and the compiled oracle) are cached under
``$FRAZIL_CACHE_DIR`` or ``$XDG_CACHE_HOME/frazil`` (default ``~/.cache/frazil``), keyed by the
content of their inputs and written atomically, so concurrent test runs never see partial files.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORACLE_SOURCE = HERE / "java" / "FrazilOracle.java"
ORACLE_CLASS = "FrazilOracle"

_SHADE_PREFIX = "org/apache/iceberg/shaded/"
_JACKSON_SLASH = b"com/fasterxml/jackson"
_JACKSON_DOT = b"com.fasterxml.jackson"


class ReferenceUnavailable(RuntimeError):
    """Java, javac, PySpark or the Iceberg runtime wheel is missing; tests should skip."""


# --------------------------------------------------------------------------------------------
# locating things


def cache_dir() -> Path:
    root = os.environ.get("FRAZIL_CACHE_DIR")
    if root:
        path = Path(root)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "frazil"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:  # read-only home (some CI sandboxes): fall back to the temp directory
        path = Path(tempfile.gettempdir()) / "frazil-cache"
        path.mkdir(parents=True, exist_ok=True)
    return path


def _java_tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", name)
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if not found:
        raise ReferenceUnavailable(f"`{name}` is not on PATH (and JAVA_HOME has none)")
    return found


def _pyspark_jars_dir() -> Path:
    try:
        import pyspark
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ReferenceUnavailable("pyspark is not installed (pip install pyspark==3.5.9)") from e
    return Path(pyspark.__file__).resolve().parent / "jars"


def _iceberg_jars_dir() -> Path:
    try:
        import snowpark_connect_deps_iceberg as deps
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ReferenceUnavailable(
            "the Iceberg runtime wheel is not installed "
            "(pip install snowpark-connect-deps-iceberg==1.0.3)"
        ) from e
    return Path(deps.__file__).resolve().parent / "jars"


def _one(pattern: Path) -> str:
    hits = sorted(glob.glob(str(pattern)))
    if not hits:
        raise ReferenceUnavailable(f"no file matches {pattern}")
    return hits[-1]


def _file_key(paths: Iterable[str]) -> str:
    """A short key for a set of input files (their names, sizes and modification times)."""
    h = hashlib.sha256()
    for p in paths:
        st = os.stat(p)
        h.update(f"{os.path.basename(p)}:{st.st_size}:{int(st.st_mtime)}\n".encode())
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# the relocated Jackson jar


def _renamer(slash: bytes) -> Callable[[bytes], bytes]:
    """Moves the package ``slash`` (``com/fasterxml/jackson``) under the runtime's shade prefix,
    in both its slash and dot forms."""
    dot = slash.replace(b"/", b".")
    shade_slash = _SHADE_PREFIX.encode()
    shade_dot = shade_slash.replace(b"/", b".")

    def rename(data: bytes) -> bytes:
        return data.replace(slash, shade_slash + slash).replace(dot, shade_dot + dot)

    return rename


_rename = _renamer(_JACKSON_SLASH)


# Sizes of the constant-pool entries other than CONSTANT_Utf8 (JVM spec, table 4.4-B).
_CP_SIZES = {
    3: 4,
    4: 4,
    5: 8,
    6: 8,
    7: 2,
    8: 2,
    9: 4,
    10: 4,
    11: 4,
    12: 4,
    15: 3,
    16: 2,
    17: 4,
    18: 4,
    19: 2,
    20: 2,
}


def _relocate_class_file(data: bytes, rename: Callable[[bytes], bytes] = _rename) -> bytes:
    """Renames the Jackson packages in a class file.

    Every class, descriptor and signature name lives in a CONSTANT_Utf8 entry of the constant
    pool, so rewriting those entries (with their new length) is enough; the rest of the file only
    refers to the pool by index and is copied unchanged.
    """
    if data[:4] != b"\xca\xfe\xba\xbe":
        raise ValueError("not a class file")
    (count,) = struct.unpack_from(">H", data, 8)
    out = bytearray(data[:10])
    pos = 10
    index = 1
    while index < count:
        tag = data[pos]
        if tag == 1:
            (length,) = struct.unpack_from(">H", data, pos + 1)
            text = rename(data[pos + 3 : pos + 3 + length])
            out += b"\x01" + struct.pack(">H", len(text)) + text
            pos += 3 + length
            index += 1
        else:
            size = _CP_SIZES[tag]
            out += data[pos : pos + 1 + size]
            pos += 1 + size
            index += 2 if tag in (5, 6) else 1  # longs and doubles take two pool slots
    out += data[pos:]
    return bytes(out)


def _write_relocated(
    sources: Sequence[str], dest: str, rename: Callable[[bytes], bytes] = _rename
) -> None:
    seen: set[str] = set()
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as out:
        for jar in sources:
            with zipfile.ZipFile(jar) as src:
                for info in src.infolist():
                    name = info.filename
                    if info.is_dir() or name.startswith("META-INF/versions/"):
                        continue
                    if name.endswith("module-info.class"):
                        continue
                    if name.startswith("META-INF/") and name.endswith(
                        ("MANIFEST.MF", ".SF", ".RSA", ".DSA")
                    ):
                        continue
                    data = src.read(name)
                    if name.endswith(".class"):
                        data = _relocate_class_file(data, rename)
                    elif name.startswith("META-INF/services/"):
                        data = rename(data)
                    new_name = rename(name.encode()).decode()
                    if new_name not in seen:
                        seen.add(new_name)
                        out.writestr(new_name, data)


def _atomic_build(dest: Path, build) -> Path:
    """Runs ``build(tmp_path)`` and moves the result to ``dest`` unless another process won."""
    if dest.exists():
        return dest
    fd, tmp = tempfile.mkstemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    try:
        build(tmp)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache may be shared
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def relocated_jackson_jar() -> str:
    jars = _pyspark_jars_dir()
    sources = sorted(
        p
        for p in glob.glob(str(jars / "jackson-*-2.*.jar"))
        # core, databind, annotations and the JSR-310 module; not Scala or YAML bindings
        if "module-scala" not in p and "yaml" not in p
    )
    if not sources:
        raise ReferenceUnavailable(f"no Jackson 2 jars under {jars}")
    dest = cache_dir() / f"iceberg-shaded-jackson-{_file_key(sources)}.jar"
    return str(_atomic_build(dest, lambda tmp: _write_relocated(sources, tmp)))


# Debian's HttpComponents Core 5 (libhttpcore5-java): the runtime jar on PyPI also lacks its
# shaded org.apache.hc classes, and its REST catalog needs Core's (Method, URIBuilder, ...) even
# over another transport (java/JdkRestCatalog.java replaces the HttpClient 5.4 one).
HTTPCORE5_JARS = ("/usr/share/java/httpcore5.jar",)


def relocated_httpcore5_jar() -> str:
    sources = [p for p in HTTPCORE5_JARS if os.path.exists(p)][:1]
    if not sources:
        raise ReferenceUnavailable(
            "HttpComponents Core 5 is not installed (apt-get install libhttpcore5-java); the "
            "Java REST catalog needs it"
        )
    dest = cache_dir() / f"iceberg-shaded-httpcore5-{_file_key(sources)}.jar"
    rename = _renamer(b"org/apache/hc/")
    return str(_atomic_build(dest, lambda tmp: _write_relocated(sources, tmp, rename)))


def reference_jars() -> list[str]:
    """The jars that make the Java reference work: Iceberg runtime, extensions, shaded Jackson."""
    jars = _iceberg_jars_dir()
    runtime = _one(jars / "iceberg-spark-runtime-3.5_2.12-*.jar")
    extensions = _one(jars / "iceberg-spark-extensions-3.5_2.12-*.jar")
    return [runtime, extensions, relocated_jackson_jar()]


# --------------------------------------------------------------------------------------------
# Spark


def reference_session(warehouse: str, catalog: str = "ref", *, rest: bool = False, **conf):
    """A local[2] SparkSession running Iceberg 1.10.2, with a Hadoop catalog named ``catalog``.
    ``rest`` adds what a REST catalog needs (:func:`rest_catalog_jars`): configure one with
    ``spark.sql.catalog.<name>.catalog-impl=org.apache.iceberg.rest.JdkRestCatalog``."""
    _java_tool("java")
    jars = reference_jars() + (rest_catalog_jars() if rest else [])
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    # Python workers must come from this interpreter's environment, not whatever is on PATH.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("frazil-interop")
        .config("spark.jars", ",".join(jars))
        .config(
            "spark.sql.extensions",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        )
        .config(f"spark.sql.catalog.{catalog}", "org.apache.iceberg.spark.SparkCatalog")
        .config(f"spark.sql.catalog.{catalog}.type", "hadoop")
        .config(f"spark.sql.catalog.{catalog}.warehouse", str(warehouse))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        # Parquet written by pyarrow holds proleptic Gregorian dates; read them as they are
        # (Spark's default refuses dates before 1582 in case they came from legacy Spark).
        .config("spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED")
        .config("spark.sql.parquet.int96RebaseModeInRead", "CORRECTED")
        .config("spark.sql.parquet.datetimeRebaseModeInWrite", "CORRECTED")
        .config("spark.sql.parquet.int96RebaseModeInWrite", "CORRECTED")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    wanted = conf.get("spark.jars", ",".join(jars))
    _ensure_jvm_with(wanted)
    launching = SparkContext._gateway is None
    spark = builder.getOrCreate()
    if launching:
        _record_launch(wanted)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# The gateway JVM this process launched for a reference session, and the jars on its class path.
_LAUNCHED: tuple[object, frozenset[str]] | None = None


def _ensure_jvm_with(jars: str) -> None:
    """Makes sure the next session's JVM has ``jars``. PySpark puts ``spark.jars`` on the
    driver's class path when it launches its gateway JVM, once per process; a later session
    asking for other jars (the REST catalog, a JDBC driver) would get the old JVM, where those
    classes cannot load. So a JVM not known to hold them is stopped, and the next
    ``getOrCreate`` launches a fresh one."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    gateway = SparkContext._gateway
    if gateway is None:
        return
    wanted = frozenset(filter(None, jars.split(",")))
    if _LAUNCHED is not None and _LAUNCHED[0] is gateway and wanted <= _LAUNCHED[1]:
        return
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    elif SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    try:
        gateway.shutdown()
    except Exception:
        pass
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        try:
            proc.stdin.close()  # the gateway JVM exits when its stdin closes
            proc.wait(timeout=60)
        except Exception:
            proc.kill()
    SparkContext._gateway = None
    SparkContext._jvm = None


def _record_launch(jars: str) -> None:
    global _LAUNCHED
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if _LAUNCHED is None or _LAUNCHED[0] is not gateway:
        _LAUNCHED = (gateway, frozenset(filter(None, jars.split(","))))


# --------------------------------------------------------------------------------------------
# the Java oracle


def oracle_classpath() -> list[str]:
    runtime, _extensions, jackson = reference_jars()
    # slf4j's API (without a binding it logs nothing): the runtime's data file and evaluator
    # classes log through it.
    slf4j = _one(_pyspark_jars_dir() / "slf4j-api-*.jar")
    return [runtime, jackson, slf4j]


def compile_oracle() -> Path:
    """Compiles java/FrazilOracle.java once per (source, jars) and returns the class directory."""
    return compile_java(ORACLE_SOURCE, oracle_classpath())


def program_classpath() -> list[str]:
    """The class path of a test program that uses the Java library beyond the oracle's needs
    (RESTCatalog, Hadoop FileIO, the generic Parquet writer): the reference jars and PySpark's
    jars (Hadoop, Parquet, slf4j)."""
    runtime, _extensions, jackson = reference_jars()
    return [runtime, jackson, relocated_httpcore5_jar(), str(_pyspark_jars_dir() / "*")]


def compile_java(
    source: Path, classpath: Sequence[str], extra_sources: Sequence[Path] = ()
) -> Path:
    """Compiles one test program (``java/<Name>.java``, with the ``extra_sources`` it uses) once
    per (sources, jars) and returns its class directory, cached and published atomically
    (concurrent runs never see a partial one)."""
    javac = _java_tool("javac")
    name = source.stem
    data = b"".join(p.read_bytes() for p in (source, *extra_sources))
    jars = [p for p in classpath if not p.endswith("*")]
    key = hashlib.sha256(data + "|".join(classpath).encode() + _file_key(jars).encode())
    dest = cache_dir() / f"{name.lower()}-{key.hexdigest()[:16]}"
    # A marker written before the atomic rename: a packaged class is not at the top level.
    done = dest / ".compiled"
    if done.exists():
        return dest
    if dest.exists():
        # Left by an older layout of this cache, or by a compile that died mid-way.
        shutil.rmtree(dest, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{dest.name}.", dir=cache_dir()))
    try:
        result = subprocess.run(
            [
                javac,
                "-nowarn",
                "-encoding",
                "UTF-8",
                "-d",
                str(tmp),
                "-cp",
                os.pathsep.join(classpath),
                str(source),
                *(str(p) for p in extra_sources),
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(f"javac failed:\n{result.stdout}\n{result.stderr}")
        (tmp / ".compiled").touch()
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, dest)  # atomic; fails if another process got there first
        except OSError:
            if not done.exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


JDK_REST_CATALOG_SOURCE = HERE / "java" / "JdkRestCatalog.java"


def rest_catalog_jars() -> list[str]:
    """Jars for the reference's REST catalog in Spark: ``JdkRestCatalog`` (java/JdkRestCatalog.java:
    Java's RESTCatalog over the JDK's HTTP client, the PyPI runtime jar lacking its shaded
    HttpClient 5) and the relocated HttpComponents Core 5 it still needs."""
    core = relocated_httpcore5_jar()
    classes = compile_java(JDK_REST_CATALOG_SOURCE, [*oracle_classpath(), core])
    dest = classes.parent / f"{classes.name}.jar"

    def build(tmp: str) -> None:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
            for path in sorted(classes.rglob("*.class")):
                out.write(path, path.relative_to(classes).as_posix())

    return [str(_atomic_build(dest, build)), core]


class OracleError(RuntimeError):
    pass


class JavaOracle:
    """A running FrazilOracle JVM. Send many requests at once with :meth:`ask`.

    Each answer is the text after ``OK `` for a success, or an :class:`Err` for a request that
    Java rejected (the message after ``ERROR ``).
    """

    def __init__(self) -> None:
        java = _java_tool("java")
        classes = compile_oracle()
        classpath = os.pathsep.join([str(classes), *oracle_classpath()])
        self._proc = subprocess.Popen(
            [
                java,
                "-Xss8m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Duser.timezone=UTC",
                "-Dfile.encoding=UTF-8",
                "-cp",
                classpath,
                ORACLE_CLASS,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._lock = threading.Lock()
        self._stderr: list[bytes] = []
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()

    def _drain_stderr(self) -> None:
        for line in self._proc.stderr:
            self._stderr.append(line)

    def close(self) -> None:
        proc = self._proc
        if proc.poll() is None:
            try:
                proc.stdin.close()
                proc.wait(timeout=10)
            except Exception:
                proc.kill()
                proc.wait()
        self._stderr_thread.join(timeout=5)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            try:
                pipe.close()
            except Exception:
                pass

    def __enter__(self) -> JavaOracle:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def ask(self, requests: Sequence[Sequence[str]]) -> list:
        """Sends requests (each a sequence of fields) and returns their answers, in order."""
        lines = []
        for fields in requests:
            for f in fields:
                if "\t" in f or "\n" in f or "\r" in f:
                    raise ValueError(f"request field contains a tab or newline: {f!r}")
            lines.append("\t".join(fields) + "\n")
        payload = ("".join(lines) + "sync\n").encode("utf-8")

        with self._lock:
            if self._proc.poll() is not None:
                raise OracleError(self._died())
            failure: list[BaseException] = []

            def feed() -> None:
                try:
                    self._proc.stdin.write(payload)
                    self._proc.stdin.flush()
                except BaseException as e:
                    failure.append(e)

            # Write from a thread while reading here, so neither pipe can fill up and deadlock.
            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            answers: list = []
            for _ in range(len(lines) + 1):
                raw = self._proc.stdout.readline()
                if not raw:
                    writer.join(5)
                    raise OracleError(self._died())
                text = raw.decode("utf-8").rstrip("\n")
                if text == "SYNC":
                    break
                if text.startswith("OK "):
                    answers.append(text[3:])
                elif text.startswith("ERROR "):
                    answers.append(Err(text[6:]))
                else:
                    raise OracleError(f"unexpected oracle output: {text!r}")
            writer.join()
            if failure:
                raise OracleError(f"writing to the oracle failed: {failure[0]!r}")
            if len(answers) != len(lines):
                raise OracleError(f"sent {len(lines)} requests, got {len(answers)} answers")
            return answers

    def _died(self) -> str:
        self._proc.wait(timeout=10)
        err = b"".join(self._stderr).decode("utf-8", "replace")
        return f"oracle exited with {self._proc.returncode}: {err[-4000:]}"

    # Convenience wrappers --------------------------------------------------------------

    def transform(self, items: Sequence[tuple[str, str, str]]) -> list:
        """(type, transform, json value) -> 'result_type\\tresult json' or Err."""
        return self.ask([("transform", t, tr, v) for t, tr, v in items])

    def to_bytes(self, items: Sequence[tuple[str, str]]) -> list:
        return self.ask([("to_bytes", t, v) for t, v in items])

    def from_bytes(self, items: Sequence[tuple[str, str]]) -> list:
        return self.ask([("from_bytes", t, h) for t, h in items])

    def json(self, items: Sequence[tuple[str, str]]) -> list:
        return self.ask([("json", t, v) for t, v in items])


class Err(str):
    """An answer for a request that Java rejected; the text is Java's message."""

    def __repr__(self) -> str:
        return f"Err({str.__repr__(self)})"


def check_available() -> None:
    """Raises ReferenceUnavailable with a readable reason when the reference cannot run."""
    _java_tool("java")
    _java_tool("javac")
    _pyspark_jars_dir()
    reference_jars()
