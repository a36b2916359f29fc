"""jaxlab.config's platform options, as JAX's: jax_platform_name picks the device of every
thread that chose none; jax_platforms narrows and orders the devices as JAXLAB_PLATFORMS."""
import threading

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.engine import devices


@pytest.fixture
def restore_platform_options():
    yield
    jaxlab.config.update("jax_platform_name", "")
    jaxlab.config.update("jax_platforms", None)


def _platform_in_new_thread() -> str:
    seen = []
    thread = threading.Thread(target=lambda: seen.append(jnp.arange(3).devices().pop().platform))
    thread.start()
    thread.join()
    return seen[0]


def test_platform_name_sets_the_device_of_every_thread(backend, restore_platform_options):
    # the backend fixture makes `backend` this thread's device; a new thread has none
    jaxlab.config.update("jax_platform_name", backend)
    assert jaxlab.config.jax_platform_name == backend
    assert _platform_in_new_thread() == backend
    np.testing.assert_array_equal(np.asarray(jnp.arange(4) * 2), [0, 2, 4, 6])


def test_a_device_chosen_in_code_wins_over_the_option(backend, restore_platform_options):
    jaxlab.config.update("jax_platform_name", "cpu")
    assert {d.platform for d in jnp.ones(2).devices()} == {backend}


def test_unknown_platform_name_raises_and_keeps_the_option(restore_platform_options):
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        jaxlab.config.update("jax_platform_name", "tpu")
    assert jaxlab.config.jax_platform_name == ""
    assert jnp.ones(2).sum() == 2          # the engine works after the error


def test_platforms_option_narrows_and_orders_the_devices(restore_platform_options):
    jaxlab.config.update("jax_platforms", "cpu")
    assert [d.platform for d in jaxlab.devices()] == ["cpu"]
    assert _platform_in_new_thread() == "cpu"
    jaxlab.config.update("jax_platforms", None)
    assert devices.allowed_platforms() is None or devices.allowed_platforms()[0] == \
        jaxlab.devices()[0].platform


def test_unknown_platforms_raise_naming_them(restore_platform_options):
    with pytest.raises(ValueError, match=r"jax_platforms='cpu,quantum' names unknown platforms \['quantum'\]"):
        jaxlab.config.update("jax_platforms", "cpu,quantum")
    assert jaxlab.config.jax_platforms is None


def test_unrecognized_option_raises_attribute_error():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such_flag"):
        jaxlab.config.update("jax_no_such_flag", 1)
