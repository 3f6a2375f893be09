"""The connector's Maven build (issue 31): ``arrowmm/spark/jvm/pom.xml`` builds the jar the
Python package ships, under coordinates a JVM build or ``--packages`` can use.

One ``mvn install`` (the JUnit tests, the jar, then ``~/.m2``) into a temporary build folder;
then what it made is compared with the committed jar.  Compared: the list of class files and
the resources (the service registration), byte for byte.  The classes' bytes too, when this
``javac`` is the one that built the committed jar (same JDK, same ``--release`` and debug
settings give the same bytes; another JDK's javac may order a constant pool differently,
which is no difference in what the jar does).  The manifests differ by design (Maven's names
the build; ``jar --build``'s records the sources' digest).
"""
from __future__ import annotations

import glob
import os
import re
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from tests.support.maven_support import JVM_DIR, POM, ROOT, mvn

import arrowmm
from arrowmm.spark import jar as jvm_jar

NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def _pom():
    return ET.parse(POM).getroot()


def _property(name):
    return _pom().find(f"m:properties/m:{name}", NS).text


def _dependency_version(artifact):
    for dep in _pom().findall("m:dependencies/m:dependency", NS):
        if dep.find("m:artifactId", NS).text.replace("${scala.binary.version}", "2.13") == artifact:
            version = dep.find("m:version", NS).text
            return re.sub(r"\$\{([^}]+)\}", lambda m: _property(m.group(1)), version)
    raise AssertionError(f"pom.xml has no dependency {artifact}")


def test_coordinates_and_version_are_the_python_package_s():
    pom = _pom()
    assert pom.find("m:groupId", NS).text == "io.arrowmm"
    assert pom.find("m:artifactId", NS).text == "arrowmm-spark"
    version = pom.find("m:version", NS).text
    assert version == arrowmm.__version__
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE).group(1) == version
    assert _property("maven.compiler.release") == "17"


def test_provided_versions_are_those_pyspark_ships():
    """Every jar the connector compiles against is at the version in pyspark's ``jars``
    folder, except Spark's own (Maven Central has no 4.3.0: the same major release, not newer
    than pyspark's)."""
    shipped = {}
    for path in glob.glob(os.path.join(jvm_jar.pyspark_jars(), "*.jar")):
        m = re.match(r"(.+?)-(\d[\w.\-]*)\.jar$", os.path.basename(path))
        if m:
            shipped[m.group(1)] = m.group(2)
    for artifact in ("hadoop-client-api", "arrow-vector", "arrow-format", "arrow-memory-core",
                     "arrow-compression", "flatbuffers-java", "jackson-databind", "slf4j-api",
                     "commons-compress", "zstd-jni", "kryo-shaded", "scala-library"):
        assert _dependency_version(artifact) == shipped[artifact], artifact
    assert _property("icu4j.version") == shipped["icu4j"]
    spark = tuple(int(p) for p in _dependency_version("spark-sql_2.13").split("."))
    pyspark = tuple(int(p) for p in shipped["spark-sql_2.13"].split("."))
    assert spark[0] == pyspark[0] and spark <= pyspark, (spark, pyspark)


def _entries(path):
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i.filename) for i in z.infolist() if not i.is_dir()}


def _javac_version():
    out = subprocess.run(["javac", "-version"], capture_output=True, text=True, check=True)
    return (out.stdout + out.stderr).split()[-1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``mvn install`` into a temporary build folder: the built jar's path."""
    target = tmp_path_factory.mktemp("maven") / "target"
    mvn(["install", f"-Darrowmm.target={target}"], JVM_DIR)
    version = arrowmm.__version__
    return target, target / f"arrowmm-spark-{version}.jar"


def test_maven_jar_holds_the_committed_jar_s_classes(installed):
    _, built = installed
    maven = _entries(built)
    committed = _entries(jvm_jar.jar_path())
    classes = sorted(n for n in committed if n.endswith(".class"))
    assert len(classes) > 50
    assert sorted(n for n in maven if n.endswith(".class")) == classes
    # resources byte for byte (the DataSourceRegister service names both short names)
    resources = sorted(n for n in committed if not n.endswith(".class") and n != "META-INF/MANIFEST.MF")
    assert resources == ["META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"]
    for name in resources:
        assert maven[name] == committed[name], name
    # Maven's own descriptors, naming the coordinates
    props = maven["META-INF/maven/io.arrowmm/arrowmm-spark/pom.properties"].decode()
    assert f"version={arrowmm.__version__}" in props and "groupId=io.arrowmm" in props
    manifest = committed["META-INF/MANIFEST.MF"].decode()
    made_by = re.search(r"Created-By: (\S+)", manifest).group(1)
    if made_by == _javac_version():
        differ = [n for n in classes if maven[n] != committed[n]]
        assert differ == [], f"{len(differ)} of {len(classes)} classes differ: {differ[:5]}"
    else:
        print(f"the committed jar was built by javac {made_by}, this is {_javac_version()}: "
              f"class bytes not compared")


def test_junit_tests_ran_and_passed(installed):
    target, _ = installed
    reports = list((target / "surefire-reports").glob("TEST-*.xml"))
    names = sorted(p.name for p in reports)
    assert "TEST-io.arrowmm.spark.FileFooterTest.xml" in names, names
    assert "TEST-io.arrowmm.spark.StatisticsFilterTest.xml" in names, names
    total = 0
    for report in reports:
        suite = ET.parse(report).getroot()
        assert suite.get("failures") == "0" and suite.get("errors") == "0", report.name
        assert suite.get("skipped") == "0", report.name
        total += int(suite.get("tests"))
    assert total >= 8


def test_install_puts_the_jar_and_pom_in_the_local_repository(installed):
    _, built = installed
    version = arrowmm.__version__
    repo = Path(os.path.expanduser("~/.m2/repository/io/arrowmm/arrowmm-spark")) / version
    assert (repo / f"arrowmm-spark-{version}.jar").read_bytes() == built.read_bytes()
    assert (repo / f"arrowmm-spark-{version}.pom").read_bytes() == POM.read_bytes()


def test_spark_gets_the_installed_jar_by_its_coordinates(installed, tmp_path):
    """``spark.jars.packages=io.arrowmm:arrowmm-spark:<version>`` (``--packages``) finds the
    installed jar in ``~/.m2`` (Spark's ``local-m2-cache`` resolver) and serves
    ``format("arrowmm_jvm")`` with it: the README's instructions for JVM users."""
    import pyarrow as pa
    from tests.support.spark_cluster_support import new_jvm

    from arrowmm.spark.session import local_session
    table = pa.table({"k": pa.array(range(100), pa.int64())})
    with pa.ipc.new_file(str(tmp_path / "k.arrow"), table.schema) as w:
        w.write_table(table)
    new_jvm()
    coordinates = f"io.arrowmm:arrowmm-spark:{arrowmm.__version__}"
    spark = local_session("local[1]", "arrowmm-packages", str(tmp_path / "spark"), jvm=False,
                          register=False, **{"spark.jars.packages": coordinates,
                                             "spark.jars.ivy": str(tmp_path / "ivy")})
    try:
        jars = spark.sparkContext.getConf().get("spark.jars", "")
        assert f"io.arrowmm_arrowmm-spark-{arrowmm.__version__}.jar" in jars, jars
        assert jvm_jar.JAR not in jars
        df = spark.read.format("arrowmm_jvm").load(str(tmp_path / "k.arrow"))
        assert sorted(r.k for r in df.collect()) == list(range(100))
    finally:
        new_jvm()
