"""FileIO: local files (atomic create-if-absent), S3 against moto's server, fsspec's memory://."""

from __future__ import annotations

import logging
import multiprocessing
import os
import pathlib
import socket
import sys
import threading
import uuid
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.fs
import pyarrow.parquet as pq
import pytest
from peers import import_peer

from frazil.exceptions import FrazilError, InvalidArgumentError, UnsupportedError
from frazil.io import FileIO, FsspecFileIO, LocalFileIO, S3FileIO, load_file_io
from frazil.io.s3 import s3_filesystem_options

# ---------------------------------------------------------------- local files


@pytest.fixture
def local() -> LocalFileIO:
    return LocalFileIO()


def test_local_round_trip_creates_parents_and_leaves_no_temp_files(
    local: LocalFileIO, tmp_path: pathlib.Path
) -> None:
    location = str(tmp_path / "a" / "b" / "f.bin")
    local.write(location, b"hello")
    assert local.read(location) == b"hello"
    assert local.exists(location)
    assert local.size(location) == 5
    assert os.listdir(tmp_path / "a" / "b") == ["f.bin"]
    local.delete(location)
    assert not local.exists(location)
    assert local.supports_atomic_create


def test_local_write_never_replaces(local: LocalFileIO, tmp_path: pathlib.Path) -> None:
    location = str(tmp_path / "v1.metadata.json")
    local.write(location, b"first")
    with pytest.raises(FileExistsError) as info:
        local.write(location, b"second")
    assert info.value.filename == location
    assert location in str(info.value)
    assert local.read(location) == b"first"
    assert os.listdir(tmp_path) == ["v1.metadata.json"]


def test_local_overwrite_replaces(local: LocalFileIO, tmp_path: pathlib.Path) -> None:
    location = str(tmp_path / "f")
    local.write(location, b"first")
    local.write(location, b"second, longer", overwrite=True)
    assert local.read(location) == b"second, longer"
    local.write(str(tmp_path / "new"), b"x", overwrite=True)
    assert sorted(os.listdir(tmp_path)) == ["f", "new"]


def test_local_missing_files_name_the_location(local: LocalFileIO, tmp_path: pathlib.Path) -> None:
    location = f"file://{tmp_path}/missing"
    for call in (local.read, local.size):
        with pytest.raises(FileNotFoundError) as info:
            call(location)
        assert info.value.filename == location
    local.delete(location)  # a missing file is not an error
    local.delete_many([location, location])


def test_other_io_errors_keep_their_type_and_name_the_location(
    local: LocalFileIO, tmp_path: pathlib.Path
) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        local.read(str(tmp_path / "dir"))
    if sys.version_info >= (3, 11):
        assert info.value.__notes__ == [f"while reading {tmp_path / 'dir'}"]
    with pytest.raises(FileExistsError):  # a directory already holds the name
        local.write(str(tmp_path / "dir"), b"x")


def test_local_delete_logs_at_debug(
    local: LocalFileIO, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    location = str(tmp_path / "f")
    local.write(location, b"x")
    with caplog.at_level(logging.DEBUG, logger="frazil.io"):
        local.delete(location)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, f"deleted {location}")
    ]


def test_file_uris(local: LocalFileIO, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "dir" / "f"
    # The spellings Python, Java/Hadoop and RFC 8089 use for the same local file.
    forms = [f"file://{path}", f"file:{path}", f"file://localhost{path}", str(path)]
    local.write(forms[0], b"data")
    assert path.read_bytes() == b"data"
    for form in forms:
        assert local.exists(form)
        assert local.read(form) == b"data"
        assert local.size(form) == 4
    with pytest.raises(FileExistsError):
        local.write(forms[1], b"other")
    fs, fs_path = local.filesystem(forms[0])
    assert isinstance(fs, pyarrow.fs.LocalFileSystem)
    assert fs_path == str(path)
    with pytest.raises(UnsupportedError, match="remote host"):
        local.read(f"file://otherhost{path}")
    with pytest.raises(UnsupportedError, match="'s3'"):
        local.read("s3://bucket/key")


def test_local_filesystem_for_parquet(local: LocalFileIO, tmp_path: pathlib.Path) -> None:
    fs, path = local.filesystem(f"file://{tmp_path}/data/0.parquet")
    fs.create_dir(os.path.dirname(path))
    table = pa.table({"id": [1, 2, 3]})
    pq.write_table(table, path, filesystem=fs)
    assert pq.read_table(path, filesystem=fs).equals(table)


def test_local_list_prefix(local: LocalFileIO, tmp_path: pathlib.Path) -> None:
    names = ["metadata/v1.metadata.json", "data/a=1/x.parquet", "data/a=2/y.parquet", "z"]
    for name in names:
        local.write(str(tmp_path / "t" / name), b"")
    (tmp_path / "t" / "empty").mkdir()
    assert local.list_prefix(str(tmp_path / "t")) == sorted(str(tmp_path / "t" / n) for n in names)
    uri = f"file://{tmp_path}/t/"
    assert local.list_prefix(uri) == sorted(f"file://{tmp_path}/t/{n}" for n in names)
    assert local.list_prefix(str(tmp_path / "t" / "data")) == [
        str(tmp_path / "t" / n) for n in names[1:3]
    ]
    assert local.list_prefix(str(tmp_path / "absent")) == []


def test_read_many_keeps_input_order(local: LocalFileIO, tmp_path: pathlib.Path) -> None:
    locations = [str(tmp_path / f"f{i}") for i in range(40)]
    for i, location in enumerate(locations):
        local.write(location, str(i).encode() * (40 - i))
    order = locations[::-1] + locations[:3]
    expected = [local.read(location) for location in order]
    assert local.read_many(order) == expected
    assert local.read_many(order, max_workers=3) == expected
    assert local.read_many(order, max_workers=1) == expected
    assert local.read_many([]) == []
    with pytest.raises(FileNotFoundError) as info:
        local.read_many([*locations[:5], str(tmp_path / "gone"), *locations[5:]])
    assert info.value.filename == str(tmp_path / "gone")
    with pytest.raises(InvalidArgumentError):
        local.read_many(locations, max_workers=0)
    gone = str(tmp_path / "gone")
    assert local.read_many([gone, locations[1], gone], missing_ok=True) == [None, b"1" * 39, None]


def test_delete_many(local: LocalFileIO, tmp_path: pathlib.Path) -> None:
    locations = [str(tmp_path / f"f{i}") for i in range(20)]
    for location in locations[::2]:
        local.write(location, b"x")
    local.delete_many(iter(locations))
    assert os.listdir(tmp_path) == []


def _race_worker(location: str, index: int, size: int, barrier, results) -> None:
    io = LocalFileIO()
    barrier.wait()
    try:
        io.write(location, bytes([index]) * size)
        results.put((index, "won"))
    except FileExistsError as exc:
        results.put((index, "exists" if exc.filename == location else repr(exc)))
    except BaseException as exc:
        results.put((index, repr(exc)))


def test_local_create_if_absent_under_process_contention(tmp_path: pathlib.Path) -> None:
    """8 processes race to create one file, each with its own content: exactly one wins, the
    file is whole and holds the winner's bytes, and a reader never sees it partial."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork")
    ctx = multiprocessing.get_context("fork")
    size = 4 << 20  # large enough that a non-atomic write would be visible half-done
    processes = 8
    seen_sizes: set[int] = set()
    for round_ in range(3):
        location = str(tmp_path / f"round{round_}" / "v2.metadata.json")
        barrier = ctx.Barrier(processes + 1)
        results = ctx.Queue()
        workers = [
            ctx.Process(target=_race_worker, args=(location, i + 1, size, barrier, results))
            for i in range(processes)
        ]
        for worker in workers:
            worker.start()
        barrier.wait()
        while any(worker.is_alive() for worker in workers):
            try:
                seen_sizes.add(os.stat(location).st_size)
            except FileNotFoundError:
                pass
        for worker in workers:
            worker.join()
        outcomes = dict(results.get(timeout=10) for _ in range(processes))
        winners = [index for index, outcome in outcomes.items() if outcome == "won"]
        assert len(winners) == 1, outcomes
        assert sorted(outcomes.values()) == ["exists"] * (processes - 1) + ["won"]
        assert pathlib.Path(location).read_bytes() == bytes([winners[0]]) * size
        assert os.listdir(os.path.dirname(location)) == ["v2.metadata.json"]
    assert seen_sizes <= {size}


def _race_thread(
    io: LocalFileIO, location: str, index: int, barrier: threading.Barrier, outcomes: dict
) -> None:
    barrier.wait()
    try:
        io.write(location, bytes([index]) * 65536)
        outcomes[index] = "won"
    except FileExistsError:
        outcomes[index] = "exists"


def test_local_create_if_absent_under_thread_contention(tmp_path: pathlib.Path) -> None:
    io = LocalFileIO()
    for round_ in range(20):
        location = str(tmp_path / f"f{round_}")
        barrier = threading.Barrier(8)
        outcomes: dict[int, str] = {}
        threads = [
            threading.Thread(target=_race_thread, args=(io, location, i, barrier, outcomes))
            for i in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winners = [index for index, outcome in outcomes.items() if outcome == "won"]
        assert len(winners) == 1 and len(outcomes) == 8
        assert io.read(location) == bytes([winners[0]]) * 65536
    assert len(os.listdir(tmp_path)) == 20


# ---------------------------------------------------------------- load_file_io


class CustomFileIO(LocalFileIO):
    pass


def test_load_file_io_by_scheme(tmp_path: pathlib.Path) -> None:
    assert type(load_file_io({}, str(tmp_path))) is LocalFileIO
    assert type(load_file_io({}, f"file://{tmp_path}")) is LocalFileIO
    assert type(load_file_io()) is LocalFileIO
    for scheme in ("s3", "s3a", "s3n", "S3"):
        assert type(load_file_io({}, f"{scheme}://bucket/warehouse")) is S3FileIO
    assert type(load_file_io({}, "memory://warehouse")) is FsspecFileIO
    # Without a location, the warehouse property decides.
    assert type(load_file_io({"warehouse": "s3://bucket/wh"})) is S3FileIO
    io = load_file_io({"k": "v"}, str(tmp_path))
    assert io.properties == {"k": "v"}


def test_load_file_io_py_io_impl_takes_precedence() -> None:
    props = {"py-io-impl": f"{__name__}.CustomFileIO", "x": "1"}
    io = load_file_io(props, "s3://bucket/key")
    assert type(io) is CustomFileIO
    assert io.properties == props
    io = load_file_io({"py-io-impl": "frazil.io.fsspec.FsspecFileIO"}, "/tmp/x")
    assert type(io) is FsspecFileIO
    for impl, message in [
        ("NoDots", "dotted path"),
        ("no_such_module_xyz.FileIO", "cannot import"),
        ("frazil.io.NoSuchClass", "not a FileIO"),
        ("frazil.exceptions.FrazilError", "not a FileIO"),
    ]:
        with pytest.raises(InvalidArgumentError, match=message):
            load_file_io({"py-io-impl": impl}, "/tmp/x")


def test_load_file_io_unknown_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UnsupportedError, match="nosuchscheme"):
        load_file_io({}, "nosuchscheme://bucket/x")
    monkeypatch.setitem(sys.modules, "fsspec", None)  # as if fsspec were not installed
    with pytest.raises(UnsupportedError, match="gs:// locations: install fsspec") as info:
        load_file_io({}, "gs://bucket/x")
    assert isinstance(info.value, FrazilError)


def test_implementations_refuse_foreign_schemes() -> None:
    with pytest.raises(UnsupportedError, match="'memory'"):
        S3FileIO().read("memory://x")
    with pytest.raises(UnsupportedError, match="'gs'"):
        LocalFileIO().exists("gs://bucket/x")


# ---------------------------------------------------------------- fsspec (memory://)


@pytest.fixture
def memory_prefix() -> str:
    return f"memory://test-{uuid.uuid4().hex}"


def test_fsspec_memory(memory_prefix: str) -> None:
    io = load_file_io({}, memory_prefix)
    assert isinstance(io, FsspecFileIO)
    assert not io.supports_atomic_create
    location = f"{memory_prefix}/meta/v1.json"
    io.write(location, b"one")
    assert io.read(location) == b"one"
    assert io.exists(location)
    assert io.size(location) == 3
    with pytest.raises(FileExistsError) as info:
        io.write(location, b"two")
    assert info.value.filename == location
    io.write(location, b"three", overwrite=True)
    assert io.read(location) == b"three"
    io.write(f"{memory_prefix}/data/a/b.parquet", b"")
    assert io.list_prefix(memory_prefix) == [
        f"{memory_prefix}/data/a/b.parquet",
        f"{memory_prefix}/meta/v1.json",
    ]
    assert io.list_prefix(f"{memory_prefix}/data/") == [f"{memory_prefix}/data/a/b.parquet"]
    assert io.list_prefix(f"{memory_prefix}/nothing") == []
    assert io.read_many([location, f"{memory_prefix}/data/a/b.parquet"]) == [b"three", b""]
    io.delete(location)
    io.delete(location)
    assert not io.exists(location)
    for call in (io.read, io.size):
        with pytest.raises(FileNotFoundError) as info:
            call(location)
        assert info.value.filename == location


def test_fsspec_filesystem_for_parquet(memory_prefix: str) -> None:
    io = FsspecFileIO()
    fs, path = io.filesystem(f"{memory_prefix}/data/0.parquet")
    assert isinstance(fs, pyarrow.fs.PyFileSystem)
    table = pa.table({"id": [1, 2, 3]})
    pq.write_table(table, path, filesystem=fs)
    assert pq.read_table(path, filesystem=fs).equals(table)
    assert io.size(f"{memory_prefix}/data/0.parquet") > 0


def test_fsspec_local_paths_are_atomic_creates(tmp_path: pathlib.Path) -> None:
    io = FsspecFileIO()
    location = f"file://{tmp_path}/f"
    io.write(location, b"a")
    with pytest.raises(FileExistsError):
        io.write(location, b"b")
    assert io.read(str(tmp_path / "f")) == b"a"
    assert io.list_prefix(str(tmp_path)) == [str(tmp_path / "f")]


# ---------------------------------------------------------------- S3 (moto's server)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    import_peer("moto")
    from moto.server import ThreadedMotoServer

    # pyarrow's AWS SDK must never look for the EC2 metadata service (not on this network).
    patch = pytest.MonkeyPatch()
    patch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()
    patch.undo()


@pytest.fixture(scope="module")
def s3_props(s3_endpoint: str) -> dict[str, str]:
    import boto3

    props = {
        "s3.endpoint": s3_endpoint,
        "s3.access-key-id": "frazil-key",
        "s3.secret-access-key": "frazil-secret",
        "s3.region": "us-east-1",
        "s3.path-style-access": "true",
    }
    client = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        aws_access_key_id="frazil-key",
        aws_secret_access_key="frazil-secret",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket="warehouse")
    return props


@pytest.fixture
def s3_prefix(s3_props: dict[str, str]) -> str:
    return f"s3://warehouse/{uuid.uuid4().hex}"


def test_s3_round_trip(s3_props: dict[str, str], s3_prefix: str) -> None:
    io = load_file_io(s3_props, s3_prefix)
    assert isinstance(io, S3FileIO)
    assert not io.supports_atomic_create
    location = f"{s3_prefix}/metadata/v1.metadata.json"
    assert not io.exists(location)
    io.write(location, b'{"format-version": 2}')
    assert io.exists(location)
    assert io.read(location) == b'{"format-version": 2}'
    assert io.size(location) == 21
    # s3a:// and s3n:// name the same objects.
    assert io.read(location.replace("s3://", "s3a://")) == b'{"format-version": 2}'
    with pytest.raises(FileExistsError) as info:
        io.write(location, b"other")
    assert info.value.filename == location
    io.write(location, b"replaced", overwrite=True)
    assert io.read(location.replace("s3://", "s3n://")) == b"replaced"
    io.delete(location)
    assert not io.exists(location)
    io.delete(location)  # missing is fine
    for call in (io.read, io.size):
        with pytest.raises(FileNotFoundError) as info:
            call(location)
        assert info.value.filename == location


def test_s3_list_read_many_delete_many(s3_props: dict[str, str], s3_prefix: str) -> None:
    io = S3FileIO(s3_props)
    names = ["metadata/v1.metadata.json", "data/a=1/x.parquet", "data/a=2/y.parquet"]
    locations = [f"{s3_prefix}/{name}" for name in names]
    for i, location in enumerate(locations):
        io.write(location, bytes([i]) * (i + 1))
    assert io.list_prefix(s3_prefix) == sorted(locations)
    assert io.list_prefix(f"{s3_prefix}/data/") == sorted(locations[1:])
    s3a = s3_prefix.replace("s3://", "s3a://")
    assert io.list_prefix(s3a) == sorted(loc.replace("s3://", "s3a://") for loc in locations)
    assert io.list_prefix(f"{s3_prefix}/absent") == []
    assert io.read_many(locations[::-1]) == [bytes([i]) * (i + 1) for i in (2, 1, 0)]
    io.delete_many([*locations, f"{s3_prefix}/never-written"])
    assert io.list_prefix(s3_prefix) == []


def test_s3_filesystem_for_parquet(s3_props: dict[str, str], s3_prefix: str) -> None:
    io = S3FileIO(s3_props)
    location = f"{s3_prefix}/data/0.parquet"
    fs, path = io.filesystem(location)
    assert isinstance(fs, pyarrow.fs.S3FileSystem)
    assert path == location[len("s3://") :]
    table = pa.table({"id": [1, 2, 3]})
    pq.write_table(table, path, filesystem=fs)
    assert pq.read_table(path, filesystem=fs).equals(table)
    assert io.size(location) > 0


def test_s3_missing_bucket_names_the_location(s3_props: dict[str, str]) -> None:
    io = S3FileIO(s3_props)
    with pytest.raises(FileNotFoundError):
        io.read("s3://no-such-bucket/x")
    with pytest.raises(InvalidArgumentError, match="names no bucket"):
        io.read("s3://")


def test_s3_filesystems_are_cached_per_configuration(s3_props: dict[str, str]) -> None:
    a = S3FileIO(s3_props).filesystem("s3://warehouse/x")[0]
    b = S3FileIO(dict(s3_props)).filesystem("s3://warehouse/y")[0]
    c = S3FileIO({**s3_props, "s3.connect-timeout": "5"}).filesystem("s3://warehouse/x")[0]
    assert a is b
    assert c is not a


def test_s3_property_mapping() -> None:
    assert s3_filesystem_options(
        {
            "s3.endpoint": "http://localhost:9000",
            "s3.access-key-id": "AK",
            "s3.secret-access-key": "SK",
            "s3.session-token": "TOKEN",
            "s3.region": "eu-west-1",
            "s3.path-style-access": "true",
            "s3.connect-timeout": "2.5",
            "s3.request-timeout": "30",
            "s3.proxy-uri": "http://proxy:8080",
            "s3.role-arn": "arn:aws:iam::1:role/r",
            "s3.role-session-name": "frazil",
            "s3.anonymous": "false",
            "unrelated": "x",
        }
    ) == {
        "endpoint_override": "http://localhost:9000",
        "access_key": "AK",
        "secret_key": "SK",
        "session_token": "TOKEN",
        "region": "eu-west-1",
        "force_virtual_addressing": False,
        "connect_timeout": 2.5,
        "request_timeout": 30.0,
        "proxy_options": "http://proxy:8080",
        "role_arn": "arn:aws:iam::1:role/r",
        "session_name": "frazil",
        "anonymous": False,
    }
    assert s3_filesystem_options({}) == {}
    # client.* are fallbacks; s3.* win.
    assert s3_filesystem_options(
        {
            "client.region": "us-west-2",
            "client.access-key-id": "CA",
            "client.secret-access-key": "CS",
            "s3.access-key-id": "SA",
            "s3.secret-access-key": "SS",
        }
    ) == {"region": "us-west-2", "access_key": "SA", "secret_key": "SS"}
    assert s3_filesystem_options({"s3.path-style-access": "false"}) == {
        "force_virtual_addressing": True
    }
    assert s3_filesystem_options({"s3.force-virtual-addressing": "TRUE"}) == {
        "force_virtual_addressing": True
    }


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"s3.path-style-access": "yes please"}, "s3.path-style-access"),
        ({"s3.connect-timeout": "soon"}, "s3.connect-timeout"),
        (
            {"s3.path-style-access": "true", "s3.force-virtual-addressing": "true"},
            "contradicts",
        ),
        ({"s3.access-key-id": "AK"}, "both"),
    ],
)
def test_s3_bad_properties(props: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        S3FileIO(props)
    with pytest.raises(InvalidArgumentError):
        load_file_io(props, "s3://bucket/x")


def test_s3_endpoint_and_credentials_are_used(s3_props: dict[str, str], s3_prefix: str) -> None:
    """The properties reach the server: the object written through S3FileIO (endpoint,
    path-style addressing, credentials, region) is the one boto3 sees there."""
    import boto3

    io = S3FileIO(s3_props)
    io.write(f"{s3_prefix}/k", b"v")
    client = boto3.client(
        "s3",
        endpoint_url=s3_props["s3.endpoint"],
        aws_access_key_id="frazil-key",
        aws_secret_access_key="frazil-secret",
        region_name="us-east-1",
    )
    key = f"{s3_prefix.removeprefix('s3://warehouse/')}/k"
    assert client.get_object(Bucket="warehouse", Key=key)["Body"].read() == b"v"


def test_file_io_is_abstract() -> None:
    with pytest.raises(TypeError):
        FileIO()  # type: ignore[abstract]
