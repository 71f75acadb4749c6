"Fixtures shared by several test modules (pytest finds this file itself)."
import pytest, torch

@pytest.fixture(scope='module')
def one_thread():
    """One torch thread for a module's tests: tiny models run far faster on a shared 2-core machine without OpenMP
    oversubscription, and floats are bit-identical across processes (a child started by a test uses one thread too).
    A module opts in with `pytestmark = pytest.mark.usefixtures('one_thread')`."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
